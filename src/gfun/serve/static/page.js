"use strict";
// The page of `gfun serve`: sends the text to POST /predict and draws the answer, then asks POST /explain why
// and draws each label's view contributions and words. No external resources.
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

  function signed(x, digits) { return (x >= 0 ? "+" : "\u2212") + Math.abs(x).toFixed(digits); }

  // What the word values of a view are (POST /explain's word_measure).
  const MEASURES = {
    "svm-term": "w\u00b7x terms of the view's SVM score",
    "posterior-change": "change in the view's posterior without the word",
    "decision-change": "change in the decision without the word",
  };

  function wordList(cls, words) {
    const span = make("span", cls);
    words.forEach((w, k) => {
      if (k) span.append(", ");
      const item = make("span", "word", `${w.words.join("/")} ${signed(w.value, 3)}`);
      item.title = `term: ${w.term}`;
      span.appendChild(item);
    });
    return span;
  }

  function showExplanation(doc) {
    const box = $("explanation");
    box.replaceChildren();
    for (const lab of doc.explained) {
      const why = make("div", "why");
      why.dataset.label = lab.label;
      const used = lab.views.filter((v) => v.used);
      const parts = used.map((v) => `${v.view.toUpperCase()} ${signed(v.contribution, 3)}`).join(" ");
      why.appendChild(make("p", "why-head", `${lab.label}: decision ${signed(lab.decision, 3)} = base ` +
        `${signed(lab.base_value, 3)} ${parts}` + (lab.predicted ? " (predicted)" : " (not predicted)")));
      const scale = Math.max(1e-12, ...lab.views.map((v) => Math.abs(v.contribution)));
      const rows = make("div", "contribs");
      for (const v of lab.views) {
        const bar = make("div", "cbar");
        const fill = make("span", v.contribution >= 0 ? "pos" : "neg");
        const width = 50 * Math.abs(v.contribution) / scale;
        fill.style.width = `${width.toFixed(1)}%`;
        fill.style.left = v.contribution >= 0 ? "50%" : `${(50 - width).toFixed(1)}%`;
        bar.appendChild(fill);
        bar.title = v.used ? `${v.view.toUpperCase()}: ${v.contribution}` : v.note;
        const notes = [v.note === "used" ? "" : v.note, v.posterior === null ? "" : `posterior ${v.posterior.toFixed(3)}`];
        const num = make("span", "num", v.used ? signed(v.contribution, 3) : "0");
        num.dataset.view = v.view;
        num.dataset.value = String(v.contribution);
        rows.append(make("span", "vname", v.view.toUpperCase()), bar, num,
          make("span", "vnote", notes.filter((x) => x).join(" · ")));
        if (v.word_measure && (v.words_up.length || v.words_down.length)) {
          const words = make("div", "words");
          words.dataset.view = v.view;
          words.append(make("span", "measure", MEASURES[v.word_measure] || v.word_measure));
          if (v.words_up.length) words.append(make("span", "dir", "up:"), wordList("up", v.words_up));
          if (v.words_down.length) words.append(make("span", "dir", "down:"), wordList("down", v.words_down));
          rows.appendChild(words);
        }
      }
      why.appendChild(rows);
      box.appendChild(why);
    }
    box.dataset.state = "done";
  }

  async function explain(doc) {
    const box = $("explanation");
    box.dataset.state = "loading";
    box.replaceChildren(make("p", "muted", "explaining…"));
    try {
      const r = await fetch("/explain", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ documents: [doc], top_words: 6 }),
      });
      const answer = await r.json();
      if (!r.ok) {
        box.replaceChildren(make("p", "muted", `No explanation: ${answer.detail}`));
        box.dataset.state = "error";
      } else showExplanation(answer.explanations[0]);
    } catch (err) {
      box.replaceChildren(make("p", "muted", `No explanation: ${err}`));
      box.dataset.state = "error";
    }
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
      else {
        const pred = answer.predictions[0];
        show(pred);
        if (pred.views !== null) await explain({ text: doc.text, lang: pred.lang });  // the language found
        else $("explanation").replaceChildren(make("p", "muted", "This model has no views to explain."));
      }
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
