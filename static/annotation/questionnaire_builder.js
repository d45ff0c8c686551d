// The questionnaire builder on the batch form: questions added, edited, moved and removed
// with ordinary fields, written as JSON into the form's questionnaire field (which the
// server checks as it checks any questionnaire: annotation/services/questionnaire.py).
// The field itself stays, under "Edit as text": YAML or JSON typed there is what is
// sent; the builder follows it while it holds JSON and says so when it does not.
(function () {
  "use strict";

  const field = document.getElementById("id_questionnaire");
  if (!field) return;
  const TYPES = [
    ["choice", "One choice among options"],
    ["number", "A number"],
    ["text", "A short text"],
  ];
  let questions = [];
  let serial = 0; // ids of the builder's own fields

  const builder = document.createElement("div");
  builder.className = "questionnaire-builder";
  const list = document.createElement("ol");
  list.className = "questions";
  const note = document.createElement("p");
  note.className = "help builder-note";
  note.setAttribute("role", "status");
  const add = button("Add a question", "add-question", () => {
    questions.push({ id: "q" + (questions.length + 1), text: "", type: "choice", required: true, options: ["", ""] });
    write();
    render();
    const texts = list.querySelectorAll(".question-text");
    if (texts.length) texts[texts.length - 1].focus();
  });
  builder.append(list, add, note);

  // the text field goes under a disclosure, below the builder
  const details = document.createElement("details");
  details.className = "questionnaire-source";
  const summary = document.createElement("summary");
  summary.textContent = "Edit as text (YAML or JSON)";
  field.parentNode.insertBefore(builder, field);
  field.parentNode.insertBefore(details, field);
  details.append(summary, field);

  function button(text, className, onClick) {
    const node = document.createElement("button");
    node.type = "button";
    node.className = "small " + className;
    node.textContent = text;
    node.addEventListener("click", onClick);
    return node;
  }

  function labelled(labelText, input) {
    const id = "qb-" + ++serial;
    const wrap = document.createElement("div");
    wrap.className = "builder-field";
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = labelText;
    input.id = id;
    wrap.append(label, input);
    return wrap;
  }

  function input(value, onInput, attributes) {
    const node = document.createElement(attributes && attributes.multiline ? "textarea" : "input");
    if (!(attributes && attributes.multiline)) node.type = (attributes && attributes.type) || "text";
    if (attributes && attributes.className) node.className = attributes.className;
    if (attributes && attributes.rows) node.rows = attributes.rows;
    node.value = value === undefined || value === null ? "" : String(value);
    node.addEventListener("input", () => {
      onInput(node.value);
      write();
    });
    return node;
  }

  function render() {
    list.replaceChildren();
    questions.forEach((question, index) => list.append(editor(question, index)));
    note.textContent = questions.length
      ? ""
      : "No questions: participants go straight from consent to the items.";
  }

  function editor(question, index) {
    const item = document.createElement("li");
    item.className = "question-editor";
    const group = document.createElement("fieldset");
    const legend = document.createElement("legend");
    legend.textContent = "Question " + (index + 1);
    group.append(legend);
    group.append(
      labelled("Question", input(question.text, (v) => (question.text = v), { className: "question-text" })),
      labelled("Id (stored with each answer)", input(question.id, (v) => (question.id = v)))
    );
    const type = document.createElement("select");
    TYPES.forEach(([value, text]) => type.append(new Option(text, value, false, value === question.type)));
    type.addEventListener("change", () => {
      question.type = type.value;
      if (question.type === "choice" && !Array.isArray(question.options)) question.options = ["", ""];
      write();
      render();
      list.querySelectorAll("select")[index].focus();
    });
    group.append(labelled("Answer", type));
    if (question.type === "choice") {
      group.append(
        labelled(
          "Options, one per line",
          input((question.options || []).join("\n"), (v) => (question.options = v.split("\n")), {
            multiline: true,
            rows: 3,
          })
        )
      );
    } else if (question.type === "number") {
      const bounds = document.createElement("div");
      bounds.className = "builder-bounds";
      bounds.append(
        labelled("At least", input(question.min, (v) => (question.min = v), { type: "number" })),
        labelled("At most", input(question.max, (v) => (question.max = v), { type: "number" }))
      );
      group.append(bounds);
    }
    const required = document.createElement("input");
    required.type = "checkbox";
    required.checked = question.required !== false;
    required.addEventListener("change", () => {
      question.required = required.checked;
      write();
    });
    const requiredWrap = labelled("Required", required);
    requiredWrap.classList.add("builder-check");
    group.append(requiredWrap);
    const actions = document.createElement("div");
    actions.className = "builder-actions";
    if (index > 0) actions.append(button("Move up", "move-up", () => move(index, -1)));
    if (index < questions.length - 1) actions.append(button("Move down", "move-down", () => move(index, 1)));
    actions.append(
      button("Remove", "remove-question", () => {
        questions.splice(index, 1);
        write();
        render();
        add.focus();
      })
    );
    group.append(actions);
    item.append(group);
    return item;
  }

  function move(index, step) {
    const [question] = questions.splice(index, 1);
    questions.splice(index + step, 0, question);
    write();
    render();
  }

  // what the server is sent: only the keys a question of its type has
  function write() {
    const clean = questions.map((question) => {
      const entry = { id: question.id.trim(), text: question.text.trim(), type: question.type };
      if (question.required === false) entry.required = false;
      if (question.type === "choice") {
        entry.options = (question.options || []).map((o) => o.trim()).filter(Boolean);
      }
      if (question.type === "number") {
        if (String(question.min ?? "").trim() !== "") entry.min = Number(question.min);
        if (String(question.max ?? "").trim() !== "") entry.max = Number(question.max);
      }
      return entry;
    });
    field.value = clean.length ? JSON.stringify(clean, null, 2) : "";
  }

  // the text field's content, when it is JSON the builder can show
  function read() {
    const text = field.value.trim();
    if (!text) {
      questions = [];
      builder.hidden = false;
      render();
      return;
    }
    try {
      const parsed = JSON.parse(text);
      if (!Array.isArray(parsed)) throw new Error("not a list");
      questions = parsed.map((q) => ({
        id: String(q.id ?? ""),
        text: String(q.text ?? ""),
        type: TYPES.some(([value]) => value === q.type) ? q.type : "text",
        required: q.required !== false,
        options: Array.isArray(q.options) ? q.options.map(String) : undefined,
        min: q.min,
        max: q.max,
      }));
      builder.hidden = false;
      render();
    } catch (notJson) {
      // YAML (or a list being typed): the text is what is sent
      builder.hidden = true;
      details.open = true;
    }
  }

  field.addEventListener("input", read);
  read();
})();
