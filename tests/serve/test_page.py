"""The page of `gfun serve` in a real headless browser (Chromium driven by selenium) against a real server.

Skipped, with the reason, where selenium, Chromium or chromedriver is missing (`make test` installs them when it
can: pip for selenium, apt-get for Debian's chromium and chromium-driver when run as root).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="gfun[serve] is not installed")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from serve_page import (  # noqa: E402
    browser_missing,
    explanation_on_page,
    headless_chromium,
    label_on_page,
    running_server,
)


@pytest.fixture(scope="module")
def browser():
    why = browser_missing()
    if why:
        print(f"\nskipping the browser test of gfun serve's page: {why}")
        pytest.skip(why)
    with headless_chromium() as driver:
        yield driver


def test_page_shows_language_views_labels_and_bars(browser, shared_data: Path, tmp_path: Path) -> None:
    """A German and a Finnish SIB-200 test sentence typed into the page get the labels the model predicts."""
    from gfun.datasets.sib200 import load_sib200
    from gfun.funnelling.generalized import GeneralizedFunnelling
    from gfun.predictions import prediction_records

    sib = load_sib200(shared_data / "sib200", ["de", "fi", "en"])
    model = GeneralizedFunnelling(views="x", random_state=0, n_jobs=1).fit(sib.train)
    model.save(str(tmp_path / "model"))
    records = prediction_records(model, sib.test)
    # the first German and Finnish test sentences with at least one label (what the page must show)
    chosen = {lang: next(i for i, r in enumerate(records) if r["lang"] == lang and r["labels"])
              for lang in ("de", "fi")}
    with running_server(tmp_path / "model") as url:
        for lang, i in chosen.items():
            shown = label_on_page(browser, url, sib.test.texts[i])
            assert "error" not in shown, shown
            assert shown["language"] == f"Language: {lang} (detected)"
            assert shown["views"].startswith(f"Views covering {lang}: X")
            assert shown["labels"] == records[i]["labels"]
            want = sorted(records[i]["probabilities"].items(), key=lambda kv: -kv[1])
            assert list(shown["bars"]) == [c for c, _ in want]  # every class (7 < 10 shown), most probable first
            assert list(shown["bars"].values()) == pytest.approx([p for _, p in want], abs=5e-4)
        # a refusal is shown on the page, not swallowed
        shown = label_on_page(browser, url, "12345 678")
        assert "Error 422" in shown["error"] and "the text has no letters" in shown["error"]


def test_page_serves_a_language_typed_by_the_user(browser, any_language_model: Path, shared_data: Path) -> None:
    """A model with a view that serves any language (P) says so in its header, and its language menu lets the
    user type a language it was not trained on: a Portuguese sentence labelled as "pt" through P."""
    from gfun.datasets.sib200 import read_sib200_file

    text = read_sib200_file(shared_data / "sib200" / "por_Latn" / "test.tsv", "pt")[0]["text"]
    with running_server(any_language_model) as url:
        shown = label_on_page(browser, url, text, lang="pt")
    assert "error" not in shown, shown
    assert shown["summary"].endswith("languages de, en, fi · any other language through P")
    assert shown["language"] == "Language: pt (given)"
    assert shown["views"].startswith("Views covering pt: P")


def test_page_explains_each_label_with_views_and_words(browser, any_language_model: Path, shared_data: Path) -> None:
    """Under the labels, the page draws each predicted label's view contributions (the numbers of POST /explain,
    adding up to the decision) and the words that pushed it, for a German sentence (X and P) and a Portuguese one
    (P alone: X does not serve it)."""
    from gfun.datasets.sib200 import read_sib200_file
    from gfun.persistence.loading import load_model

    model = load_model(any_language_model)
    texts = {lang: read_sib200_file(shared_data / "sib200" / folder / "test.tsv", lang)[0]["text"]
             for lang, folder in (("de", "deu_Latn"), ("pt", "por_Latn"))}
    with running_server(any_language_model) as url:
        shown = {lang: (label_on_page(browser, url, text, lang=lang), explanation_on_page(browser))
                 for lang, text in texts.items()}
    for lang, (labelled, why) in shown.items():
        assert "error" not in labelled and "error" not in why, (labelled, why)
        expected = model.explain([texts[lang]], langs=[lang], top_words=6)[0]
        assert list(why) == [lab.label for lab in expected.explained]
        for lab in expected.explained:
            drawn = why[lab.label]
            assert drawn["contributions"] == pytest.approx({v.view: v.contribution for v in lab.views}, abs=1e-9)
            assert lab.base_value + sum(drawn["contributions"].values()) == pytest.approx(lab.decision, abs=1e-8)
            assert drawn["head"].startswith(f"{lab.label}: decision ")
            for v in lab.views:
                if v.words_up or v.words_down:
                    assert [w.rsplit(" ", 1)[0] for w in drawn["words"][v.view]["up"]] == [
                        "/".join(w.words) for w in v.words_up]
        if lang == "pt":
            assert all(why[lab]["contributions"]["x"] == 0.0 for lab in why)
