"""Names shared by the verifier and the replay plugin (kept free of heavy imports)."""

NOT_REPLAYED_PREFIX = "porter-not-replayed: "
BF16_DOT_ISSUE = "tl.dot on bf16 operands computes wrong results in the Triton interpreter (triton-lang/triton#11584)"
