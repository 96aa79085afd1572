"""Re-score the model against the stored H200 sweeps (bench/tune/data/): a change that makes the
model pick worse configs on the measured shapes fails here.

The sweeps up to blind5 are calibration data: their blind splits were each scored once by an
earlier model, and the H200 constants are fit on their rows (bench/tune/fit.py). h200_blind6.json
(44 shapes, 11 each of bf16, fp16, fp8 and fp32) was timed and committed before that round's
model changes (bfc97ad) and scored once after them (f01a213). h200_blind7.json (28 shapes, weighted to
the weak classes) was timed before the next round's changes (835e38b) and scored once after them:
the honest figures, which meet the issue's goal of 0.97 / 0.85 for fp16 alone (see MEASURED).
h200_blind8.json (40 shapes, 10 per dtype, a realistic mix) was timed after that round's final model
(829f285) and scored once with it, with no model change since: the goal is met by fp16, fp32 and fp8,
not by bf16 (0.940 / 0.747). h200_blind9.json (44 shapes, model dims not swept before) was timed at the start
of the next round (d0aa778), before its model changes, and scored once with its final model (f9d620d): the
goal is met by fp32 alone (bench/tune/data/blind9_scored_once.txt). h200_blind10.json (40 shapes) was timed after
that scoring, before dev3-tune5's changes, and scored once with its model (83d49fe): the goal is met by no dtype
(bf16 0.965 / 0.922 is closest; bench/tune/data/blind10_scored_once.txt). h200_cal6.json (12 shapes in the
classes of blind10's worst picks) is calibration from the start. h200_blind11.json (42 shapes) was timed at the
start of session 23 (6942659), before dev4-tune6/7's changes, and scored once with their model (6dcde42): the goal
is met by fp16, fp8 and fp32, not by bf16 (0.966 / 0.842; bench/tune/data/blind11_scored_once.txt).
h200_blind12.json (42 shapes) was timed at the start of session 24 and scored once with the unchanged model of
session 23 (196bae2): the goal is met by every dtype (bench/tune/data/blind12_scored_once.txt). h200_blind13.json
(42 shapes), timed beside blind12, was scored once right after it with the same model: fp16 and fp32 meet the goal,
bf16 (0.965 / 0.841) and fp8 (0.948 / 0.818) do not (bench/tune/data/blind13_scored_once.txt). h200_blind14.json
(42 shapes) was timed before dev5-tf8's fp8 changes and scored once with them (e56d16a): bf16 and fp32 meet the
goal, fp16 (0.930 / 0.528) and fp8 (0.940 / 0.653) do not, each from one small MoE shape of ~10 us
(bench/tune/data/blind14_scored_once.txt); re-timed side by side with the clock held, both re-time at 1.000
(data/confirm_blind14.log). h200_blind15.json (28 shapes) was timed with the clock held (sweep.py --idle-s) after the
model was final and scored once (219507d): bf16, fp16 and fp32 meet the goal, fp8 (0.949 / 0.835) does not
(bench/tune/data/blind15_scored_once.txt). h200_cal7.json (16 fp8 shapes, clock held, session 25) is calibration. The floors
are the values measured (bench/tune/validate.py prints the full table), less a small tolerance
for float noise: what the model achieves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.targets import get_target
from porter.tune import default_space, rank_gemm
from porter.tune.scoring import HELD_OUT_SPLITS, SWEEP_DTYPES, evaluate, load_rows, model_order

DATA_DIR = Path(__file__).resolve().parents[2] / "bench" / "tune" / "data"
SWEEPS = {
    "h200_sweep.json": ({"cal", "val"}, 48),
    "h200_cal2.json": ({"cal"}, 48),
    "h200_cal3.json": ({"cal"}, 40),
    "h200_fresh.json": ({"fresh"}, 36),
    "h200_blind.json": ({"blind"}, 40),
    "h200_blind2.json": ({"blind2"}, 58),
    "h200_cal4.json": ({"cal"}, 40),
    "h200_blind3.json": ({"blind3"}, 40),
    "h200_blind4.json": ({"blind4"}, 14),
    "h200_blind5.json": ({"blind5"}, 42),
    "h200_blind6.json": ({"blind6"}, 44),
    "h200_blind7.json": ({"blind7"}, 28),
    "h200_blind8.json": ({"blind8"}, 40),
    "h200_cal5.json": ({"cal5"}, 14),
    "h200_blind9.json": ({"blind9"}, 44),
    "h200_blind10.json": ({"blind10"}, 40),
    "h200_blind11.json": ({"blind11"}, 42),
    "h200_blind12.json": ({"blind12"}, 42),
    "h200_blind13.json": ({"blind13"}, 42),
    "h200_blind14.json": ({"blind14"}, 42),
    "h200_blind15.json": ({"blind15"}, 28),
    "h200_cal6.json": ({"cal6"}, 12),
    "h200_cal7.json": ({"cal7"}, 16),
    "h200_blind20.json": ({"blind20"}, 28),
}
TOL = 0.005
# selector -> (geomean, min) per split and dtype group, as measured
MEASURED = {
    "val": {
        # top-8 min 0.972 before mma.sync's ldmatrix/MMA serialisation (dev3-tune3): decode_down8b's best
        # tile, 32x128 on 32 SMs, fell to 14th (0.952 with the 32x64 tile in the top 8)
        # 0.970 / 0.967 (bf16) before the many-wave burst stall (dev3-tune5): m16384_up8b 0.948 -> 0.930 picks
        # 128x256x32 on 5 stages where 4 stages measured 7% faster (the stage count is in the noise elsewhere)
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.973/0.906, model_top4=0.99/0.906, model_top8=0.998/0.972
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model_top4=0.99/0.906
        "all": {"model": (0.973, 0.906), "model_top4": (0.986, 0.905), "model_top8": (0.995, 0.906)},
        "bf16": {"model": (0.965, 0.906)},
        # 0.961 / 0.862 before the single-row wrapped rate (dev3-tune4); 0.982 / 0.956 before the K-only element-wise registers (dev4-tune7):
        # rec_odd_2048 (1 wave of 128x128 tiles) picks 128x128x64 over 64x128x32, 0.979 -> 0.948, a near tie
        "fp8": {"model": (0.979, 0.948)},
    },
    "fresh": {
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.974/0.870, 0.985/0.877, 0.991/0.877
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.978/0.912, model_top4=0.987/0.913
        "all": {"model": (0.977, 0.895), "model_top4": (0.985, 0.895), "model_top8": (0.992, 0.913)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.978/0.912
        "bf16": {"model": (0.976, 0.895)},  # f_decode_5k back to 1.0 with the single-row wrapped rate
        # 0.974 / 0.877 before it (dev3-tune4): the M = 1 fp8 rows now pick 8 warps where 4 measured
        # faster (1x13824x5120 1.0 -> 0.941, 1x5120x5120 0.877 -> 0.870), while sweep, blind, blind2, blind7
        # and cal5 gain 0.10-0.16 on five fp8 decode rows; leave-one-sweep-out fp8 0.9543 -> 0.9562
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.970/0.870 (f_decode_5k 0.870 -> 0.965)
        "fp8": {"model": (0.978, 0.918)},
    },
    "blind": {
        # fp8 0.958 / 0.725 before the store-row registers (dev4-tune6): b_odd_all (every dim off the grid) no
        # longer picks 256x128x32, whose kernel spills 156 registers (0.725 -> 0.974)
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.97/0.846, model_top4=0.984/0.885, model_top8=0.994/0.939
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.972/0.846, 0.986/0.885
        "all": {"model": (0.976, 0.915), "model_top4": (0.988, 0.931), "model_top8": (0.996, 0.954)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.968/0.915
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.971/0.915
        "bf16": {"model": (0.976, 0.917)},
        # 0.961 before the many-wave burst stall (dev3-tune5): b_rec_98304 0.993 -> 0.936, 128x128x128 on two
        # blocks per SM is charged for both blocks' bursts (K = 768: a short K loop, where the stall has not shown)
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.972/0.846 (b_decode_7k 0.846 -> 0.985)
        "fp8": {"model": (0.981, 0.936)},
    },
    "blind2": {
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.97/0.844, model_top4=0.981/0.844, model_top8=0.988/0.844
        "all": {"model": (0.973, 0.844), "model_top4": (0.983, 0.844), "model_top8": (0.988, 0.844)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.98/0.891
        "bf16": {"model": (0.983, 0.891)},
        "fp8": {"model": (0.963, 0.844)},  # 0.961 before the K-only element-wise registers (dev4-tune7)
    },
    "blind3": {
        "fp16": {"model": (0.980, 0.839), "model_top4": (0.983, 0.839)},
        "fp32": {"model": (0.984, 0.881), "model_top4": (0.993, 0.891)},
    },
    "blind4": {
        # model=0.986/0.957 before session 35's small-M near-ties: b4_decode_qkv's raw timing of 32x64x64/4/5 (1.000
        # with the re-timed rows validate.py reads)
        "fp32": {"model": (0.981, 0.930), "model_top4": (1.000, 1.000), "model_top8": (1.000, 1.000)},
    },
    # scored once by the previous model (0.956 / 0.786), calibration data since
    "blind5": {
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.967/0.786, model_top4=0.978/0.842, model_top8=0.985/0.842
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.969/0.786
        "all": {"model": (0.974, 0.839), "model_top4": (0.981, 0.842), "model_top8": (0.987, 0.842)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.971/0.899, model_top4=0.979/0.899
        "bf16": {"model": (0.981, 0.918), "model_top4": (0.988, 0.918)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.961/0.786, model_top4=0.98/0.922
        "fp16": {"model": (0.982, 0.922), "model_top4": (0.987, 0.922)},
        "fp8": {"model": (0.959, 0.839), "model_top4": (0.968, 0.842)},
        "fp32": {"model": (0.976, 0.889), "model_top4": (0.988, 0.912)},
    },
    # timed before that round's model changes (bfc97ad), scored once after them (bf16 0.953 / 0.879
    # then; the goal, 0.97 / 0.85 per dtype, was met by fp16 and fp32); calibration since
    "blind6": {
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.973/0.834, model_top4=0.987/0.88, model_top8=0.991/0.892
        # model=0.978/0.834 before session 35's small-M near-ties (fp8 and fp32 go to the most stages, then 4 warps):
        # b6_f8_m8_o's raw 10 us sweep timing of its new pick 64x128x128/4/5 is the launch-gap artefact (1.000 with
        # the re-timed rows validate.py reads)
        "all": {"model": (0.966, 0.468), "model_top4": (0.992, 0.924), "model_top8": (0.996, 0.924)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.968/0.883, model_top4=0.983/0.917
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model_top4=0.991/0.928
        "bf16": {"model": (0.975, 0.883), "model_top4": (0.987, 0.927)},
        # top-4 0.997 / 0.986 before the many-wave burst stall (dev3-tune5): b6_h_rec_bot (K = 256) loses its best
        # config from the top 4 (pick 0.945 -> 0.961)
        "fp16": {"model": (0.988, 0.961), "model_top4": (0.995, 0.968)},
        # 0.949 / 0.834 (top-4 0.970 / 0.880) before the K-only element-wise registers (dev4-tune7): b6_f8_odd_all 0.878 -> 0.999
        # model=0.960/0.834 before session 35's small-M near-ties (b6_f8_m8_o, above)
        "fp8": {"model": (0.904, 0.468), "model_top4": (0.982, 0.924)},
        "fp32": {"model": (0.989, 0.960), "model_top4": (0.999, 0.990)},
    },
    # 28 shapes weighted to the weak classes (sizes off the 16-grid, small M, tall-skinny), timed at
    # the start of dev2-tune2's round (835e38b) and scored once with its final model (the goal is
    # met by fp16 alone: all 0.927 / 0.744, bf16 0.911 / 0.744 then, the other dtypes as below); the
    # bf16 spill cost was refit on every row afterwards, blind7 included, which these floors follow
    "blind7": {
        # fp8 0.916 / 0.790 before the store-row registers (dev4-tune6): b7_f8_odd_all 0.829 -> 0.987, _all2 0.790 -> 0.905
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.95/0.744, model_top4=0.965/0.841, model_top8=0.982/0.919
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.957/0.744, 0.973/0.841, 0.988/0.919
        "all": {"model": (0.960, 0.744), "model_top4": (0.976, 0.908), "model_top8": (0.990, 0.919)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.94/0.744, model_top4=0.967/0.937
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.944/0.744, model_top4=0.971/0.937
        "bf16": {"model": (0.952, 0.744), "model_top4": (0.977, 0.937)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.98/0.929, model_top4=0.981/0.929
        "fp16": {"model": (0.998, 0.995), "model_top4": (0.999, 0.996)},
        # 0.945 (top-4 0.955) before the K-only element-wise registers (dev4-tune7): b7_f8_odd_all2 0.905 -> 0.999
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.955/0.837, top-4 0.966/0.841
        "fp8": {"model": (0.963, 0.908), "model_top4": (0.975, 0.908)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.956/0.915, model_top4=0.969/0.919
        "fp32": {"model": (0.949, 0.915), "model_top4": (0.979, 0.919)},
    },
    # 40 shapes timed after the final model (829f285; 3eba1f4) and scored once with it (all 0.965 / 0.747,
    # bf16 0.940 / 0.747, fp32 0.978 / 0.918); calibration since (dev3-tune3), these floors follow
    "blind8": {
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.975/0.894, model_top4=0.987/0.897, model_top8=0.993/0.923
        "all": {"model": (0.977, 0.894), "model_top4": (0.989, 0.897), "model_top8": (0.995, 0.923)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.972/0.923, model_top4=0.976/0.923
        "bf16": {"model": (0.979, 0.923), "model_top4": (0.983, 0.923)},
        "fp16": {"model": (0.976, 0.939), "model_top4": (0.991, 0.951)},
        # 0.973 before the many-wave burst stall (dev3-tune5): b8_f8_rec_mid 0.992 -> 0.944 (256x128x128 over
        # 128x128x128 on two blocks per SM, K = 1024), as blind's b_rec_98304; every fp8 sweep left out: 0.9565 -> 0.9572
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.968/0.894, top-4 0.986/0.897: b8_f8_decode_down 0.993 -> 0.938 (64x256 over 64x128)
        "fp8": {"model": (0.962, 0.894), "model_top4": (0.981, 0.897)},
        "fp32": {"model": (0.986, 0.954), "model_top4": (0.996, 0.973)},
    },
    # 44 shapes timed before dev3-tune3/4's changes and scored once with their final model (f9d620d): all
    # 0.959 / 0.814, bf16 0.957 / 0.856, fp16 0.951 / 0.894 (the honest held-out figures of that round); the
    # floors follow the many-wave burst stall (dev3-tune5), which moves its large-M rows to BK 32
    "blind9": {
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.968/0.856, model_top4=0.984/0.893, model_top8=0.987/0.893
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model_top4=0.992/0.924
        "all": {"model": (0.975, 0.856), "model_top4": (0.989, 0.894), "model_top8": (0.994, 0.932)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.969/0.856, model_top4=0.982/0.893
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.977/0.856
        # before session 33 (DRAM row segments, in-flight bytes): model_top4=0.990/0.933 (b9_bf_odd_mk's top 4)
        "bf16": {"model": (0.966, 0.854), "model_top4": (0.985, 0.894)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.961/0.894, model_top4=0.981/0.899
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.972/0.894, model_top4=0.991/0.924
        "fp16": {"model": (0.976, 0.894), "model_top4": (0.980, 0.894)},
        # 0.960 / 0.899 (top-4 0.975 / 0.905) before the K-only element-wise registers (dev4-tune7): b9_f8_odd_nk 0.899 -> 0.999
        "fp8": {"model": (0.970, 0.932), "model_top4": (0.985, 0.932)},
        "fp32": {"model": (0.980, 0.903), "model_top4": (1.000, 1.000)},
    },
    # 40 shapes timed before dev3-tune5's changes and scored once with its model (83d49fe)
    "blind10": {
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.958/0.847, model_top4=0.982/0.847, model_top8=0.988/0.847
        "all": {"model": (0.971, 0.859), "model_top4": (0.991, 0.903), "model_top8": (0.998, 0.974)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.965/0.922, model_top4=0.983/0.922
        "bf16": {"model": (0.972, 0.934), "model_top4": (0.990, 0.938)},
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.948/0.859, model_top4=0.982/0.903
        "fp16": {"model": (0.958, 0.859), "model_top4": (0.992, 0.974)},
        # 0.951 / 0.847 (top-4 0.965 / 0.847) before the K-only element-wise registers (dev4-tune7): b10_f8_odd_all 0.847 -> 0.997
        "fp8": {"model": (0.967, 0.900), "model_top4": (0.981, 0.903)},
        # 0.969 / 0.849 before the burst stall was kept to the widths it was measured on (dev6-tf8): b10_f32_rec_n96
        "fp32": {"model": (0.989, 0.926), "model_top4": (1.000, 1.000)},
    },
    # 14 calibration shapes timed after dev3-tune3 to test its mma.sync term and the M = 1 rows (scored
    # before dev3-tune4's change: bf16 0.965 / 0.935, fp16 0.998, fp8 0.907 / 0.840)
    "cal5": {
        # before dev4-tune7 (K-only registers, 16-bit load cycles): model=0.97/0.935, model_top4=0.988/0.935
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.981/0.937, model_top4=1.0/1.0
        "bf16": {"model": (0.992, 0.957), "model_top4": (0.992, 0.957)},
        "fp16": {"model": (0.998, 0.998)},
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 1.0/1.0: c5_f8_decode_14k/28k 1.0 -> 0.98 (64x128 on 8 warps over 4)
        "fp8": {"model": (0.979, 0.967)},
    },
    # 42 shapes timed before dev4-tune6/7's changes and scored once with their model (6dcde42): the honest
    # held-out figures of session 23
    "blind11": {
        "all": {"model": (0.971, 0.842), "model_top4": (0.990, 0.915), "model_top8": (0.996, 0.934)},
        "bf16": {"model": (0.966, 0.842), "model_top4": (0.985, 0.915)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.976/0.858
        "fp16": {"model": (0.990, 0.945), "model_top4": (0.997, 0.966)},
        "fp8": {"model": (0.971, 0.931), "model_top4": (0.982, 0.933)},
        "fp32": {"model": (0.973, 0.946), "model_top4": (0.996, 0.976)},
    },
    # 42 shapes timed at the start of session 24 and scored once with session 23's unchanged model (196bae2)
    "blind12": {
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.977/0.857
        "all": {"model": (0.981, 0.857), "model_top4": (0.993, 0.934), "model_top8": (0.996, 0.945)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.971/0.857
        "bf16": {"model": (0.981, 0.857), "model_top4": (0.999, 0.991)},
        "fp16": {"model": (0.983, 0.933), "model_top4": (0.993, 0.945)},
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.972/0.929, top-4 0.983/0.934 (b12_f8_decode_up 0.929 -> 1.0)
        "fp8": {"model": (0.980, 0.934), "model_top4": (0.985, 0.934)},
        "fp32": {"model": (0.984, 0.955), "model_top4": (0.998, 0.983)},
    },
    # 42 shapes timed beside blind12, scored once right after it with the same model
    "blind13": {
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.968/0.818, 0.984/0.826, 0.994/0.931
        "all": {"model": (0.971, 0.841), "model_top4": (0.987, 0.904), "model_top8": (0.995, 0.938)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.965/0.841
        "bf16": {"model": (0.972, 0.840), "model_top4": (0.994, 0.948)},
        "fp16": {"model": (0.979, 0.936), "model_top4": (0.986, 0.936)},
        # dev5-tf8 (fp8 mma.sync fragment conversions, fp8 single-row re-reads): was 0.948/0.818, top-4 0.957/0.826 (b13_f8_decode_qkv 0.818 -> 0.931)
        "fp8": {"model": (0.960, 0.901), "model_top4": (0.968, 0.904)},
        "fp32": {"model": (0.980, 0.960), "model_top4": (0.997, 0.975)},
    },
    # 42 shapes timed at the start of session 24, scored once with the session's final model (e56d16a)
    "blind14": {
        "all": {"model": (0.960, 0.528), "model_top4": (0.986, 0.681), "model_top8": (0.998, 0.966)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model_top4=0.994/0.974
        "bf16": {"model": (0.981, 0.934), "model_top4": (0.991, 0.968)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model_top4=0.995/0.966
        "fp16": {"model": (0.930, 0.528), "model_top4": (0.998, 0.988)},
        "fp8": {"model": (0.940, 0.653), "model_top4": (0.952, 0.681)},
        # 0.971 / 0.865 before the burst stall was kept to the widths it was measured on (dev6-tf8): b14_f32_rec_n96
        "fp32": {"model": (0.985, 0.961), "model_top4": (0.999, 0.995)},
    },
    # 28 shapes timed with the clock held after the session's model was final, scored once (219507d)
    "blind15": {
        "all": {"model": (0.973, 0.835), "model_top4": (0.992, 0.939), "model_top8": (1.000, 0.993)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.975/0.921, model_top4=0.987/0.946
        "bf16": {"model": (0.982, 0.920), "model_top4": (0.994, 0.981)},
        "fp16": {"model": (0.993, 0.977), "model_top4": (1.000, 1.000)},
        "fp8": {"model": (0.949, 0.835), "model_top4": (0.992, 0.951)},
        "fp32": {"model": (0.975, 0.939), "model_top4": (0.991, 0.939)},
    },
    # 12 calibration shapes (session 23) in the classes of blind10's worst picks: fp8 with every dim off
    # the 16-grid near 2-4k, fp32 tall-skinny N = 64-128, fp16 large odd-M squares and N = 512-768 at small K
    "cal6": {
        "bf16": {"model": (1.000, 1.000)},
        "fp16": {"model": (0.972, 0.943), "model_top4": (0.995, 0.988)},
        # 0.893 / 0.712 (top-4 0.898) at HEAD before the store-row registers (dev4-tune6): c6_f8_odd_all_a 0.712 -> 0.905
        # 0.949 / 0.905 (top-4 0.954 / 0.906) before the K-only element-wise registers (dev4-tune7): c6_f8_odd_all_a 0.905 -> 0.998
        "fp8": {"model": (0.972, 0.916), "model_top4": (0.978, 0.917)},
        "fp32": {"model": (0.956, 0.931), "model_top4": (0.991, 0.973)},
    },
    # 16 fp8 calibration shapes (session 25), clock held: small MoE GEMMs of 9-18 us and large-M GEMMs. The
    # small rows' first timings and re-timings (retime_ms) differ by up to 2x, so their minimum is noise-bound
    "cal7": {
        "fp8": {"model": (0.923, 0.582), "model_top4": (0.979, 0.817), "model_top8": (0.986, 0.867)},
    },
    # 28 shapes swept in session 28 with a GPU spin before each timed launch (sweep.py --lead-us), scored once with
    # the model of session 25 (data/blind20_scored_once.txt); fp8 meets the goal, the others sit at 0.959-0.969
    "blind20": {
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.967/0.83
        # before session 32's 16-bit store-row registers: model=0.972/0.83, model_top4=0.989/0.837
        "all": {"model": (0.976, 0.868), "model_top4": (0.993, 0.922)},
        # before session 32's 16-bit store-row registers: model=0.959/0.83
        "bf16": {"model": (0.975, 0.934)},
        # before session 32 (16-bit rows past M near free, mma.sync rates refit): model=0.964/0.864
        "fp16": {"model": (0.984, 0.922)},
        "fp8": {"model": (0.977, 0.928)},
        "fp32": {"model": (0.969, 0.868)},
    },
}


@pytest.fixture(scope="module")
def result():
    rows = []
    for name, (splits, count) in SWEEPS.items():
        loaded = load_rows(DATA_DIR / name)
        assert len(loaded) == count and {r.split for r in loaded} == splits, name
        rows += loaded
    return evaluate(rows, "h200")  # the best fixed config is chosen on the cal rows


@pytest.mark.parametrize("split,group", [(s, g) for s in MEASURED for g in MEASURED[s]])
def test_model_keeps_its_measured_scores(result, split, group):
    assert_floors(result[f"{split}/{group}"], MEASURED[split][group], (split, group))


def assert_floors(table: dict, floors: dict, where: tuple) -> None:
    """Each selector's geomean and minimum stay at their measured values, less TOL."""
    for selector, (geomean, minimum) in floors.items():
        assert table[selector]["geomean"] >= geomean - TOL, (*where, selector, table[selector])
        assert table[selector]["min"] >= minimum - TOL, (*where, selector, table[selector])


@pytest.mark.parametrize("split", HELD_OUT_SPLITS)
def test_model_beats_the_fixed_baselines_on_held_out_shapes(result, split):
    table = result[f"{split}/all"]
    for baseline in ("default", "best_fixed", "tutorial8"):
        assert table["model"]["geomean"] > table[baseline]["geomean"] + 0.05, baseline
        assert table["model"]["min"] > table[baseline]["min"], baseline
    assert table["model_top8"]["geomean"] >= table["model_top4"]["geomean"] >= table["model"]["geomean"]


def test_predicted_time_tracks_measured_time():
    # the pick's predicted time is within 2x of its measured time on every shape with aligned sizes
    from porter.targets import get_target
    from porter.tune.scoring import model_order, model_predictions

    target = get_target("h200")
    for name in SWEEPS:
        for row in load_rows(DATA_DIR / name):
            if row.k % 16 or row.n % 16:
                continue
            order = model_order(row, target)
            ratio = model_predictions(row, target)[order[0]] / row.ms[order[0]]
            assert 0.5 < ratio < 2.0, (row.dtype, row.name, ratio)


def test_short_rows_come_from_the_spun_re_timing():
    """validate.sweep_rows puts the --lead-us re-timing of a short row in place of the stored one (launch_gap.py)."""
    import sys

    sys.path.insert(0, str(DATA_DIR.parent))
    from validate import sweep_rows

    lead = {(row.split, row.name, row.dtype): row for row in load_rows(DATA_DIR / "h200_lead_short.json")}
    assert len(lead) == 307
    rows = dict(((sweep, row.name, row.dtype), row) for sweep, row in sweep_rows([DATA_DIR / "h200_blind19.json"]))
    # b19_f8_m192_moe: 19.1 us picked vs 10.9 us best in the sweep, a CPU launch gap; spun, both are under 11 us
    row = rows[("blind19", "b19_f8_m192_moe", "fp8")]
    assert row.ms == lead[("blind19", "b19_f8_m192_moe", "fp8")].ms
    assert row.split == "blind19"
    assert row.best < 0.011


# 28 shapes swept in session 31 (blind21, lead spin and read flush as blind20). The lent machine was an H100, not the
# H200 the constants were fit on, so the sweep is scored with porter's h100 spec (hardware facts, no fit of its own),
# once, with the model of session 25 (data/blind21_h100_scored_once.txt): bf16 and fp8 meet the goal there.
H100_BLIND21 = {
    "all": {"model": (0.970, 0.828), "model_top4": (0.989, 0.835)},
    "bf16": {"model": (0.990, 0.975)},
    "fp16": {"model": (0.953, 0.874)},  # 0.959 when scored once; 0.953 after session 32's 16-bit changes
    "fp8": {"model": (0.996, 0.984)},
    "fp32": {"model": (0.938, 0.828)},
}


# blind22 (28 shapes defined in session 31 before its sweep), swept on the same H100 right after blind21's scoring and
# scored once with the same model (data/blind22_h100_scored_once.txt): bf16 and fp16 meet the goal there
H100_SWEEPS = {
    "blind21": H100_BLIND21,
    "blind22": {
        # scored once at 0.962 / 0.852 (all), bf16 0.980 / 0.927, fp16 0.970 / 0.870; session 32's 16-bit changes
        # (rows past M near free, mma.sync rates refit on the H200 sweeps alone) raised them, as below
        "all": {"model": (0.968, 0.852), "model_top4": (0.992, 0.937)},
        "bf16": {"model": (0.987, 0.967)},
        "fp16": {"model": (0.989, 0.968)},
        "fp8": {"model": (0.933, 0.852)},
        "fp32": {"model": (0.968, 0.909)},
    },
    # blind23 (28 shapes defined in session 32 after its model change, before the sweep), swept on the lent H100 and
    # scored once with that model (data/blind23_h100_scored_once.txt): fp16 meets the goal there; the model of
    # session 25 would have scored bf16 0.928 / 0.760 and fp16 0.988 / 0.960 on it, the rest the same
    "blind23": {
        # after it (spent), the 16-bit store-row registers unpriced: bf16 0.965 / 0.835 -> 0.980 / 0.930 (in sample:
        # blind23 was one of the folds that chose it)
        "all": {"model": (0.973, 0.810), "model_top4": (0.981, 0.827)},
        "bf16": {"model": (0.980, 0.930)},
        "fp16": {"model": (0.991, 0.965)},
        "fp8": {"model": (0.962, 0.909)},
        "fp32": {"model": (0.964, 0.810)},
    },
    # blind24 (28 shapes defined after the store-row change, before the sweep), swept on the lent H100 and scored once
    # with that model (data/blind24_h100_scored_once.txt): fp16, fp8 and fp32 meet the goal there; the model of
    # session 25 scores bf16 0.959 / 0.790 and fp16 0.940 / 0.745 on it (fp8 and fp32 the same)
    "blind24": {
        # after it (spent), session 33's DRAM row segments and in-flight bytes: bf16 0.947 / 0.790 -> 0.978 / 0.918
        # (b24_bf_rec_n80 0.790 -> 0.991, in sample: every fold chose them), fp16 0.977 -> 0.971 (b24_h_m28_down
        # 0.985 -> 0.943)
        "all": {"model": (0.979, 0.874), "model_top4": (0.989, 0.918)},
        "bf16": {"model": (0.978, 0.918)},
        "fp16": {"model": (0.971, 0.932)},
        "fp8": {"model": (0.981, 0.874)},
        "fp32": {"model": (0.987, 0.968)},
    },
    # blind25 (28 shapes defined with the same final model, no change after), swept on the lent H100 and scored once
    # (data/blind25_h100_scored_once.txt): fp16 meets the goal. bf16's 0.496 is a sweep artifact: the pick/best pairs
    # re-timed side by side (data/confirm_blind25.log) give bf16 0.964 / 0.789, fp16 0.992 / 0.978, fp8 0.969 / 0.914,
    # fp32 0.971 / 0.873 (b25_bf_m4096_ff 0.496 -> 0.988)
    "blind25": {
        # after it (spent), session 33's DRAM terms: bf16 0.873 -> 0.899 (b25_bf_rec_n112 0.814 -> 1.000, in sample)
        "all": {"model": (0.953, 0.496), "model_top4": (0.991, 0.869)},
        "bf16": {"model": (0.899, 0.496)},
        "fp16": {"model": (0.993, 0.984)},
        "fp8": {"model": (0.960, 0.866)},
        "fp32": {"model": (0.964, 0.844)},
    },
    # blind26 (28 shapes defined before session 33's DRAM terms, swept on the lent H100 in session 34 and scored once
    # with the final model, data/blind26_h100_scored_once.txt): bf16, fp16 and fp32 meet the goal; fp8's geomean
    # 0.960 does not (its minimum 0.878, the M=1 decode, does). No re-timing: the device budget was spent.
    "blind26": {
        "all": {"model": (0.975, 0.878), "model_top4": (0.991, 0.878)},
        "bf16": {"model": (0.976, 0.942)},
        "fp16": {"model": (0.985, 0.948)},
        "fp8": {"model": (0.960, 0.878)},
        "fp32": {"model": (0.979, 0.948)},
    },
    # blind27 (29 shapes defined in session 35 before any model change, swept on the lent H100 and scored once with
    # the model unchanged since 522bc6f, data/blind27_h100_scored_once.txt): bf16 meets the goal; fp16 0.969, fp32
    # 0.966 and fp8 0.952 do not; every minimum is over 0.85 (fp8's M = 1 decode 0.860, fp32's M = 768 MoE 0.869)
    "blind27": {
        "all": {"model": (0.967, 0.860), "model_top4": (0.986, 0.860)},
        "bf16": {"model": (0.986, 0.956)},
        "fp16": {"model": (0.969, 0.912)},
        "fp8": {"model": (0.952, 0.860)},
        "fp32": {"model": (0.966, 0.869)},
    },
    # blind28 (29 shapes defined after blind27 was scored, before any change) and blind29 (defined after blind28 was
    # scored, swept before any further change), scored once with session 35's model (small-M near-ties to the deepest
    # pipeline: it changes no blind28 pick; on blind29 fp8 0.970 -> 0.976, b29_f8_m64_moe 0.902 -> 0.943)
    "blind28": {
        "all": {"model": (0.962, 0.842), "model_top4": (0.983, 0.842)},
        "bf16": {"model": (0.968, 0.903)},
        "fp16": {"model": (0.975, 0.931)},
        "fp8": {"model": (0.941, 0.842)},
        "fp32": {"model": (0.966, 0.897)},
    },
    "blind29": {
        "all": {"model": (0.980, 0.885), "model_top4": (0.991, 0.885)},
        "bf16": {"model": (0.990, 0.973)},
        "fp16": {"model": (0.968, 0.913)},
        "fp8": {"model": (0.976, 0.885)},
        "fp32": {"model": (0.987, 0.938)},
    },
    # blind30 (29 shapes defined in session 36 before any change), scored once with session 35's model, which
    # session 36 left as it was
    "blind30": {
        "all": {"model": (0.969, 0.871), "model_top4": (0.987, 0.887)},
        "bf16": {"model": (0.971, 0.925)},
        "fp16": {"model": (0.991, 0.973)},
        "fp8": {"model": (0.946, 0.871)},
        "fp32": {"model": (0.974, 0.903)},
    },
    # blind31 (29 shapes defined in session 37 before any change), scored once with session 35's model, which
    # sessions 36 and 37 left as they were
    "blind31": {
        "all": {"model": (0.982, 0.895), "model_top4": (0.989, 0.914)},
        "bf16": {"model": (0.991, 0.957)},
        "fp16": {"model": (0.968, 0.895)},
        "fp8": {"model": (0.976, 0.914)},
        "fp32": {"model": (0.995, 0.982)},
    },
    # blind32 and blind33 (scored once in sessions 41 and 42; calibration since): what the model of session 44 scores
    "blind32": {
        "all": {"model": (0.975, 0.892), "model_top4": (0.990, 0.897)},
        "bf16": {"model": (0.974, 0.892)},
        "fp16": {"model": (0.973, 0.948)},
        "fp8": {"model": (0.968, 0.897)},
        "fp32": {"model": (0.985, 0.938)},
    },
    "blind33": {
        "all": {"model": (0.982, 0.893), "model_top4": (0.989, 0.915)},
        "bf16": {"model": (0.993, 0.968)},
        "fp16": {"model": (0.962, 0.893)},
        "fp8": {"model": (0.983, 0.919)},
        "fp32": {"model": (0.990, 0.976)},
    },
    # blind34 (32 shapes defined in session 43 before any timing), scored once with session 44's model (L1 overflow,
    # idle tensor cores of a lone 2-warp tile)
    "blind34": {
        "all": {"model": (0.973, 0.846), "model_top4": (0.988, 0.846)},
        "bf16": {"model": (0.976, 0.919)},
        "fp16": {"model": (0.984, 0.914)},
        "fp8": {"model": (0.957, 0.846)},
        "fp32": {"model": (0.973, 0.906)},
    },
}


@pytest.mark.parametrize("split,group", [(s, g) for s in H100_SWEEPS for g in H100_SWEEPS[s]])
def test_model_keeps_its_measured_scores_on_the_h100_sweeps(split, group):
    rows = load_rows(DATA_DIR / f"h100_{split}.json")
    assert len(rows) >= 28 and {r.split for r in rows} == {split}
    assert_floors(evaluate(rows, "h100")[f"{split}/{group}"], H100_SWEEPS[split][group], (split, group))


@pytest.mark.parametrize("split", ["blind33", "blind34"])
def test_porter_tunes_own_pick_is_the_pick_the_h100_sweeps_score(split):
    # The blind figures score the model's ranking of the configs a sweep timed; a user gets its ranking of porter's
    # standard space. On NVIDIA the two sets are one (porter.tune.space), so the figures are what porter tune gives:
    # before they were, its fp32 pick at 128x1536x4096 was a 64x64 wgmma tile 3.8x slower than the 32-row best.
    rows = load_rows(DATA_DIR / f"h100_{split}.json")
    target = get_target("h100")
    for row in rows:
        top = rank_gemm("h100", SWEEP_DTYPES[row.dtype], row.m, row.n, row.k)[0].config
        picked = tuple(top[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages", "GROUP_M"))
        assert picked == row.configs[model_order(row, target)[0]], (row.name, row.dtype)


@pytest.mark.parametrize("split", ["blind33", "blind34"])
def test_porter_tunes_nvidia_space_is_the_set_the_h100_sweeps_time(split):
    # bench/tune/sweep.py lists its configs itself (it runs on a lent GPU without porter installed): this holds the two
    # lists together, config by config, on every row of the stored sweeps, not only at the model's pick.
    target = get_target("h100")
    for row in load_rows(DATA_DIR / f"h100_{split}.json"):
        space = {
            (c.BLOCK_M, c.BLOCK_N, c.BLOCK_K, c.num_warps, c.num_stages, c.GROUP_M)
            for c in default_space(target, SWEEP_DTYPES[row.dtype], row.m)
        }
        assert set(row.configs) <= space, (row.name, row.dtype, sorted(set(row.configs) - space))
        assert space <= set(row.configs) | set(row.untimed), (row.name, row.dtype)
