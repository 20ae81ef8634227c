// The page's forms, a part of the runtime apart from the snug global: the
// full runtimes (index.js, index-mcp.js) import it, and snuggen build puts
// dist/forms.js before a tree-shaken runtime when the page may have a form
// (pack: mayForm). It uses nothing of the runtime, and runs before it, as it
// did when it was a part of snug.js.
//
// Without allow-forms the sandbox drops every form submission, and Chromium
// fires no "submit" event either, so forms written for the open web do
// nothing. The runtime fires the event itself, after the browser's own
// validity check, for the ways a user submits: a submit button's click
// (Enter in a field clicks the form's default button), Enter in a form that
// has no submit button, and requestSubmit(). The browser's own submission is
// stopped: the sandbox would only refuse it with a console error ("Blocked
// form submission"), and a host whose sandbox allows forms, as some MCP
// Apps hosts' do, would deliver a second "submit" and navigate the frame.
// (A <form method="dialog"> closing its <dialog> is in modals.js.)

// requestSubmit is the browser's, less what the sandbox blocks: the
// validity check (unless novalidate), then the submit event; a click on a
// submit button and Enter in a form without one submit through it.
HTMLFormElement.prototype.requestSubmit = function (submitter) {
  const unchecked = this.noValidate || submitter?.formNoValidate;
  if (unchecked || this.reportValidity()) {
    this.dispatchEvent(new SubmitEvent("submit", { bubbles: true, cancelable: true, submitter }));
  }
};

addEventListener("click", (event) => {
  const button = event.target.closest?.("button,input");
  if (button?.form && button.type == "submit" && !event.defaultPrevented) {
    event.preventDefault();
    button.form.requestSubmit(button);
  }
});

// A form has no default button when none of its elements (those outside it
// with form= too) is a submit button.
addEventListener("keydown", (event) => {
  const field = event.target;
  if (event.key != "Enter" || field.localName != "input" || !field.form) return;
  const hasSubmitButton = [...field.form.elements].some((element) => element.type == "submit");
  if (!hasSubmitButton) {
    event.preventDefault();
    field.form.requestSubmit();
  }
});

// The browser's own submit event (a sandbox that allows forms, as some MCP
// Apps hosts' do, fires one after ours for Enter in a form without a
// button) is stopped before the app sees it, and its navigation with it.
addEventListener(
  "submit",
  (event) => {
    if (event.isTrusted) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  },
  true,
);
