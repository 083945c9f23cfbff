"use strict";
// The page of `gfun serve`: sends the text to POST /predict and draws the answer. No external resources.
(function () {
  const $ = (id) => document.getElementById(id);
  let model = null;
  const OTHER = "\u0000other";  // the language menu's "other" entry (no language code can be it)

  function text(el, value) { el.textContent = value; return el; }
  function make(tag, cls, value) {
    const el = document.createElement(tag);
    if (cls) el.className = cls;
    if (value !== undefined) el.textContent = value;
    return el;
  }

  async function loadModel() {
    try {
      const r = await fetch("/model");
      model = await r.json();
      const views = model.views.length ? model.views.map((v) => v.letter.toUpperCase()).join("") : model.estimator;
      // which languages the model serves: its training languages, and any other one when a view serves any
      const through = (model.any_language_views || []).map((v) => v.toUpperCase()).join(", ");
      const others = model.any_language ? " · any other language" + (through ? ` through ${through}` : "") : "";
      text($("model-summary"), `${model.estimator} · views ${views} · ${model.classes.length} classes · ` +
        `languages ${model.languages.join(", ")}${others}`);
      $("model-summary").title = model.views.map((v) => `${v.letter.toUpperCase()}: ${v.serves}`).join("\n");
      text($("version"), `gfun ${model.gfun_version}`);
      for (const lang of model.languages) {
        const opt = make("option", null, lang);
        opt.value = lang;
        $("lang").appendChild(opt);
      }
      if (model.any_language) {  // the menu lets the user type any other language's code
        const opt = make("option", null, "other (type its code)…");
        opt.value = OTHER;
        $("lang").appendChild(opt);
      }
    } catch (err) {
      text($("model-summary"), `could not read /model: ${err}`);
    }
  }

  function showError(message) {
    $("result").hidden = true;
    text($("error"), message);
    $("error").hidden = false;
  }

  function show(pred) {
    $("error").hidden = true;
    text($("language"), `Language: ${pred.lang}` + (pred.lang_detected ? " (detected)" : " (given)"));
    let views = "";
    if (pred.views === null) views = `Model: ${model ? model.estimator : "baseline"} (no views)`;
    else {
      const selected = model && model.selected_views ? model.selected_views : null;
      views = `Views covering ${pred.lang}: ` + (pred.views.length ? pred.views.map((v) => v.toUpperCase()).join(", ") : "none");
      if (selected) views += ` · selected by the model: ${selected.map((v) => v.toUpperCase()).join(", ")}`;
    }
    text($("views"), views);
    const labels = $("labels");
    labels.replaceChildren();
    if (!pred.labels.length) labels.appendChild(make("li", "none", "no label predicted"));
    for (const label of pred.labels) labels.appendChild(make("li", "label", label));
    const bars = $("bars");
    bars.replaceChildren();
    const chosen = new Set(pred.labels);
    for (const [cls, p] of Object.entries(pred.probabilities || {})) {
      const bar = make("div", "bar" + (chosen.has(cls) ? " on" : ""));
      const fill = make("span");
      fill.style.width = `${(100 * p).toFixed(1)}%`;
      bar.appendChild(fill);
      bar.title = `${cls}: ${p}`;
      bars.append(make("span", "cls", cls), bar, make("span", "p", p.toFixed(3)));
    }
    $("result").hidden = false;
  }

  async function submit(event) {
    event.preventDefault();
    const doc = { text: $("text").value };
    const lang = $("lang").value === OTHER ? $("lang-other").value.trim() : $("lang").value;
    if (lang) doc.lang = lang;
    const topK = parseInt($("topk").value, 10);
    const body = { documents: [doc] };
    if (topK > 0) body.top_k = topK;
    $("submit").disabled = true;
    try {
      const r = await fetch("/predict", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
      const answer = await r.json();
      if (!r.ok) showError(`Error ${r.status}: ${answer.detail}`);
      else show(answer.predictions[0]);
    } catch (err) {
      showError(`The request failed: ${err}`);
    } finally {
      $("submit").disabled = false;
    }
  }

  $("form").addEventListener("submit", submit);
  $("lang").addEventListener("change", () => {
    const other = $("lang").value === OTHER;
    $("lang-other").hidden = !other;
    if (other) $("lang-other").focus();
  });
  loadModel();
})();
