import pytest

from porter.errors import UsageError
from porter.targets import all_targets, get_target

REQUIRED = ["mi300x", "mi325x", "mi350x", "mi355x", "h100", "h200", "b200"]


def test_required_targets_present():
    assert set(REQUIRED) <= set(all_targets())


@pytest.mark.parametrize("name", REQUIRED)
def test_derived_peaks_match_quoted(name):
    target = get_target(name)
    assert target.quoted_tflops, name
    for dtype, quoted in target.quoted_tflops.items():
        derived = target.peak_tflops(dtype)
        assert derived == pytest.approx(quoted, rel=0.03), (name, dtype, derived, quoted)


def test_lookup_by_arch_and_alias():
    assert get_target("gfx950").name == "mi350x"
    assert get_target("gfx942").name == "mi300x"
    assert get_target("MI355X").name == "mi355x"
    assert get_target("sm_90").name == "h100"


def test_unknown_target_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown target"):
        get_target("mi999")


def test_target_facts_that_drive_rules():
    mi300x, mi350x, b200 = get_target("mi300x"), get_target("mi350x"), get_target("b200")
    assert mi300x.lds_bytes == 64 * 1024 and mi350x.lds_bytes == 160 * 1024
    assert mi300x.fp8_formats["e4m3"] == "float8_e4m3fnuz" and mi300x.fp8_e4m3_max == 240.0
    assert mi350x.fp8_formats["e4m3"] == "float8_e4m3fn" and mi350x.fp8_e4m3_max == 448.0
    assert mi300x.tf32 == "native" and mi350x.tf32 == "none"
    assert mi350x.max_num_warps == 16 and b200.max_num_warps == 32
    assert get_target("mi325x").units == 304 and get_target("mi325x").hbm_gbps == 6000
    assert get_target("mi355x").lds_bytes == mi350x.lds_bytes
    assert mi350x.hbm_bytes / b200.hbm_bytes == pytest.approx(1.6)


def test_targets_cli_refuses_an_unknown_format(capsys):
    from porter.cli import main

    assert main(["targets", "--format", "xml"]) == 2
    assert "--format must be table or json" in capsys.readouterr().err
