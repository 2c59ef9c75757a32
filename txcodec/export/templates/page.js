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
// A page txcodec serve sends (main[data-live]): the conversation is brought up to date in
// place from the server's events, keeping the reader's scroll and what they opened.
var live = document.querySelector("main[data-live]");
if (live && window.EventSource) {
  new EventSource(live.dataset.live).addEventListener("update", function (event) {
    var x = window.scrollX, y = window.scrollY, open = {};
    live.querySelectorAll("details[data-tool-use-id]").forEach(function (d) { open[d.dataset.toolUseId] = d.open; });
    live.innerHTML = event.data;
    live.querySelectorAll("details[data-tool-use-id]").forEach(function (d) {
      if (d.dataset.toolUseId in open) d.open = open[d.dataset.toolUseId];
    });
    window.scrollTo(x, y);
    live.dataset.version = String(Number(live.dataset.version || "0") + 1);
  });
}
