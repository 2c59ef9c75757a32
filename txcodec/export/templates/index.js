// Search and filters. Each typed word must be in the row's title and first prompt
// (data-search, lower case) or begin one of the distinct words of everything its session
// says (data-words, made when the index was: docs/html.md#exporting-a-store); the harness,
// project and dates narrow the rows further.
var box = document.getElementById("search");
var pick = function (id) { return document.getElementById(id); };
function apply() {
  var words = box.value.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || [];
  var harness = pick("harness").value, project = pick("project").value;
  var since = pick("since").value, until = pick("until").value;
  document.querySelectorAll(".project").forEach(function (section) {
    var shown = 0;
    var inProject = !project || section.dataset.project === project;
    section.querySelectorAll("li[data-search]").forEach(function (row) {
      var all = " " + (row.dataset.words || "") + " ";
      var day = row.dataset.updated || "";
      var hit = inProject &&
        (!harness || row.dataset.harness === harness) &&
        (!since || (day && day >= since)) &&
        (!until || (day && day <= until)) &&
        words.every(function (w) { return row.dataset.search.indexOf(w) >= 0 || all.indexOf(" " + w) >= 0; });
      row.hidden = !hit;
      if (hit) shown++;
    });
    section.hidden = shown === 0;
  });
  pick("count").textContent = document.querySelectorAll("li[data-search]:not([hidden])").length;
}
box.addEventListener("input", apply);
["harness", "project", "since", "until"].forEach(function (id) { pick(id).addEventListener("change", apply); });
