from tests.codemod_cases import check, run


def test_num_warps_literal_in_config_and_launch():
    result = check(
        "PT101",
        """\
        import triton

        CONFIGS = [
            triton.Config({"BLOCK": 128}, num_warps=32),  # big rows
            triton.Config({"BLOCK": 64}, num_warps=8),
        ]

        def launch(x):
            kernel[(1,)](x, num_warps=32)
        """,
        [4, 9],
        expected="""\
        import triton
        import porter_shim

        CONFIGS = [
            triton.Config({"BLOCK": 128}, num_warps=porter_shim.cap_num_warps(32)),  # big rows
            triton.Config({"BLOCK": 64}, num_warps=8),
        ]

        def launch(x):
            kernel[(1,)](x, num_warps=porter_shim.cap_num_warps(32))
        """,
    )
    assert result.uses_shim and result.facts["max_num_warps"] == 16


def test_num_warps_computed_conditional():
    check(
        "PT101",
        """\
        def softmax(x, BLOCK_SIZE):
            num_warps = 32 if BLOCK_SIZE >= 4096 else 8
            kernel[(1,)](x, num_warps=num_warps)
        """,
        [2],
        expected="""\
        import porter_shim
        def softmax(x, BLOCK_SIZE):
            num_warps = porter_shim.cap_num_warps(32 if BLOCK_SIZE >= 4096 else 8)
            kernel[(1,)](x, num_warps=num_warps)
        """,
    )


def test_num_warps_exclusive_writes_target_limit():
    check(
        "PT101",
        """\
        nw = 32 if big else 8
        kernel[(1,)](x, num_warps=32)
        kernel[(1,)](x, num_warps=n)
        """,
        [1, 2, 3],
        exclusive=True,
        expected="""\
        nw = 16 if big else 8
        kernel[(1,)](x, num_warps=16)
        kernel[(1,)](x, num_warps=min(n, 16))
        """,
    )


def test_num_warps_within_limit_is_left_alone():
    assert run("PT101", "kernel[(1,)](x, num_warps=16)\n", [1]) is None


def test_num_warps_outside_finding_lines_untouched():
    result = run("PT101", "a(num_warps=32)\nb(num_warps=32)\n", [2])
    assert result.text.endswith("a(num_warps=32)\nb(num_warps=porter_shim.cap_num_warps(32))\n")


def test_warp_size_arithmetic():
    check(
        "PT102",
        '''\
        """GELU."""
        import triton

        NUM_WARPS = 4

        def gelu(x):
            BLOCK = NUM_WARPS * 32 * 4  # one 16-byte vector per lane
            lane = tid % 32
            return BLOCK, lane
        ''',
        [7, 8],
        expected='''\
        """GELU."""
        import triton
        import porter_shim

        NUM_WARPS = 4

        def gelu(x):
            BLOCK = NUM_WARPS * porter_shim.WARP_SIZE * 4  # one 16-byte vector per lane
            lane = tid % porter_shim.WARP_SIZE
            return BLOCK, lane
        ''',
    )


def test_warp_size_exclusive_uses_wave_size():
    check(
        "PT102",
        "WARP_SIZE = 32\nthreads = nw * 32\n",
        [1, 2],
        exclusive=True,
        expected="WARP_SIZE = 64\nthreads = nw * 64\n",
    )


def test_num_warps_already_branched_per_vendor_is_left_alone():
    assert run("PT101", "num_warps = 32 if not is_hip() else 16\n", [1]) is None
