// What a batch may add to an answer on the rating page (rating.js asks it):
// * "I can't judge this one" (allow_cant_judge): a toggle chosen like an answer — it
//   clears the chosen option, choosing an option clears it — and sent with Submit as
//   {"cant_judge": true}; the key 0 toggles it.
// * an optional comment box (comment_box): a note sent with the answer, emptied with
//   each new item.
// Without either on the page, every function answers as if nothing were added.
(function () {
  "use strict";

  const passButton = document.getElementById("cant-judge");
  const commentBox = document.getElementById("comment");
  let onChange = () => {};

  function setPass(on) {
    if (!passButton) return;
    passButton.setAttribute("aria-pressed", on ? "true" : "false");
    passButton.classList.toggle("selected", on);
  }

  if (passButton) {
    passButton.addEventListener("click", () => {
      setPass(passButton.getAttribute("aria-pressed") !== "true");
      onChange(passButton);
    });
  }

  window.AnswerExtras = {
    // rating.js calls this once, with what to do when the pass is toggled
    init(callback) {
      onChange = callback;
    },
    passKey: passButton ? passButton.dataset.key : null,
    passChosen() {
      return Boolean(passButton) && passButton.getAttribute("aria-pressed") === "true";
    },
    // the key (or a click) toggles the pass; the focus goes to it, as to a chosen option
    togglePass() {
      if (!passButton) return;
      setPass(!this.passChosen());
      passButton.focus({ preventScroll: true });
      onChange(passButton);
    },
    clearPass() {
      setPass(false);
    },
    comment() {
      return commentBox ? commentBox.value.trim() : "";
    },
    // a new item: no pass chosen, an empty comment box
    reset() {
      setPass(false);
      if (commentBox) commentBox.value = "";
    },
  };
})();
