// Search: each typed word must be in the row's title and first prompt (data-search, lower
// case) or among the distinct words of everything its session says (data-words, made when
// the store was exported: docs/html.md#exporting-a-store).
var box = document.getElementById("search");
box.addEventListener("input", function () {
  var words = box.value.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || [];
  document.querySelectorAll(".project").forEach(function (section) {
    var shown = 0;
    section.querySelectorAll("li[data-search]").forEach(function (row) {
      var all = " " + (row.dataset.words || "") + " ";
      var hit = words.every(function (w) {
        return row.dataset.search.indexOf(w) >= 0 || all.indexOf(" " + w) >= 0;
      });
      row.hidden = !hit;
      if (hit) shown++;
    });
    section.hidden = shown === 0;
  });
  document.getElementById("count").textContent = document.querySelectorAll("li[data-search]:not([hidden])").length;
});
