// The console's only script: copy buttons, and replacing the address of a page that shows a new
// secret so that reloading it is a plain GET of the keys page (the secret is not shown again and
// the form is not sent twice). Everything works without it except copying.
"use strict";
(function () {
  var replace = document.body && document.body.getAttribute("data-replace-url");
  if (replace && window.history && window.history.replaceState) {
    window.history.replaceState(null, "", replace);
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-copy]") : null;
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    var label = button.textContent;
    navigator.clipboard.writeText(source.textContent).then(function () {
      button.textContent = "Copied";
      button.setAttribute("aria-live", "polite");
      setTimeout(function () { button.textContent = label; }, 2000);
    }, function () {
      button.textContent = "Select and copy by hand";
    });
  });
})();
