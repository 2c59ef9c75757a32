// Folds and the expand/collapse-all buttons. No network, no eval, nothing from the session.
document.addEventListener("click", function (event) {
  var button = event.target.closest("button");
  if (!button) return;
  if (button.classList.contains("unfold")) {
    var fold = button.parentElement;
    var open = fold.classList.toggle("open");
    button.textContent = open ? "Show less" : "Show all " + button.dataset.lines + " lines";
  } else if (button.dataset.action) {
    var expand = button.dataset.action === "expand";
    document.querySelectorAll("main details").forEach(function (d) { d.open = expand; });
  }
});
