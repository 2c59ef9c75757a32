// Search over the titles and first prompts the rows carry (data-search, lower case).
var box = document.getElementById("search");
box.addEventListener("input", function () {
  var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
  document.querySelectorAll(".project").forEach(function (section) {
    var shown = 0;
    section.querySelectorAll("li[data-search]").forEach(function (row) {
      var hit = words.every(function (w) { return row.dataset.search.indexOf(w) >= 0; });
      row.hidden = !hit;
      if (hit) shown++;
    });
    section.hidden = shown === 0;
  });
  document.getElementById("count").textContent = document.querySelectorAll("li[data-search]:not([hidden])").length;
});
