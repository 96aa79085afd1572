"""porter plan: the co-design advisor. Models a recommendation model's memory and step time on a
source and a target GPU, and proposes the changes that use the target's strengths."""

from porter.plan.evaluate import Evaluation, evaluate
from porter.plan.model import ModelDesc, Table, load_model, parse_model

__all__ = ["Evaluation", "ModelDesc", "Table", "evaluate", "load_model", "parse_model"]
