"""Names shared by the verifier and the replay plugin (kept free of heavy imports)."""

NOT_REPLAYED_PREFIX = "porter-not-replayed: "
BF16_DOT_ISSUE = "tl.dot on bf16 operands computes wrong results in the Triton interpreter (triton-lang/triton#11584)"


def launch_identity(launch: dict) -> list:
    """What makes two recorded launches (or compile jobs) the same kernel build: the function, its signature and
    argument specialization, the constexprs and the launch options."""
    return [
        launch["module"],
        launch["qualname"],
        launch["signature"],
        launch.get("specialization", {}),
        launch["constexprs"],
        launch["options"],
    ]
