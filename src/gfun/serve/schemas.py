"""The OpenAPI schemas of the bodies ``gfun serve`` reads and answers (pydantic models, for ``/openapi.json`` and
``/docs`` only: the bodies themselves are checked by :class:`gfun.serve.service.ModelService`)."""

from __future__ import annotations

from typing import Any

from gfun.serve.service import MAX_EXPLAIN_BATCH, MAX_TOP_WORDS

__all__ = ["openapi_schemas"]


def openapi_schemas() -> dict[str, Any]:
    """OpenAPI schemas of the request and response bodies (pydantic models; only for the documentation)."""
    from pydantic import BaseModel, Field

    class Document(BaseModel):
        text: str = Field(description="the document's text")
        lang: str | None = Field(None, description="its language code as the model knows it (e.g. 'de'); "
                                                   "detected when missing")
        id: str | int | None = Field(None, description="echoed back (default: the document's position)")

    class PredictRequest(BaseModel):
        documents: list[Document] = Field(description="the documents to label (at most the server's max_batch)")
        top_k: int | None = Field(None, ge=0, description="how many class probabilities to return per document, "
                                                          "most probable first (default: all)")

    class Prediction(BaseModel):
        id: str
        lang: str
        lang_detected: bool = Field(description="whether the language was detected (the document had none)")
        labels: list[str] = Field(description="predicted classes")
        probabilities: dict[str, float] | None = Field(None, description="class -> probability, decreasing")
        views: list[str] | None = Field(description="letters of the views that cover the document's language")

    class PredictResponse(BaseModel):
        predictions: list[Prediction]
        seconds: float

    class ExplainRequest(BaseModel):
        documents: list[Document] = Field(description=f"the documents to explain (at most {MAX_EXPLAIN_BATCH}, and "
                                                      "at most the server's max_batch)")
        top_words: int | None = Field(None, ge=0, le=MAX_TOP_WORDS, description="most words per view and direction "
                                                                                "(default 10; 0: none)")
        top_k: int | None = Field(None, ge=1, description="explain each document's k best-scoring labels (default: "
                                                          "the predicted ones, or the best one when none is)")
        labels: list[str] | None = Field(None, description="explain these labels for every document")

    class WordEffect(BaseModel):
        term: str = Field(description="the term as the view weighs it (a stem for X)")
        words: list[str] = Field(description="the words of the text behind it")
        value: float = Field(description="how much it pushed the label (see word_measure)")

    class ViewContribution(BaseModel):
        view: str
        contribution: float = Field(description="Shapley value, in units of the decision")
        used: bool
        note: str
        posterior: float | None
        word_measure: str | None = Field(description="svm-term: w*x terms of the view's SVM score; "
                                                     "posterior-change: the view's posterior minus its posterior "
                                                     "without the word; decision-change: the same for the decision")
        view_score: float | None
        intercept: float | None
        words_up: list[WordEffect]
        words_down: list[WordEffect]

    class LabelExplanation(BaseModel):
        label: str
        predicted: bool
        decision: float = Field(description="base_value + the views' contributions")
        base_value: float
        probability: float | None
        views: list[ViewContribution]

    class DocumentExplanation(BaseModel):
        id: str
        lang: str
        lang_detected: bool
        labels: list[str]
        explained: list[LabelExplanation]

    class ExplainResponse(BaseModel):
        explanations: list[DocumentExplanation]
        aggregation: str
        views: list[str]
        seconds: float

    class Error(BaseModel):
        detail: str
        index: int | None = Field(None, description="position of the document the error is about")
        field: str | None = None

    return {"PredictRequest": PredictRequest, "PredictResponse": PredictResponse, "ExplainRequest": ExplainRequest,
            "ExplainResponse": ExplainResponse, "Error": Error}
