"""The HelixDB transport shortcuts send what the SDK itself would send."""

from __future__ import annotations

import json
import math
import os

import helixdb as hx
import pytest

from agent_memory.index.helix_transport import PreEncodedRequest, install_fast_bytes_lowering


def _write_batch() -> hx.WriteBatch:
    add = hx.write_batch().var_as("n", hx.g().add_n("L", [(f, hx.PropertyInput.param(f)) for f in ("id", "v")]))
    return hx.write_batch().var_as("old", hx.g().n_with_label_where("L", hx.Predicate.eq("id", "a")).drop()) \
        .for_each_param("rows", add)


def test_pre_encoded_parameters_are_the_sdks_json() -> None:
    rows = [{"id": "我对花生过敏 \"q\"", "v": [0.1, -2.5e-8, 3.0], "n": 2**53, "ok": True, "none": None,
             "meta": {"k": ["x", 1]}}]
    ours = json.loads(PreEncodedRequest.write(_write_batch()).with_json_parameters({"rows": rows}).to_json_bytes())
    sdk = json.loads(hx.QueryRequest.write(_write_batch()).with_untyped_parameter("rows", rows).to_json_bytes())
    assert ours == sdk
    no_params = hx.read_batch().var_as("c", hx.g().n_with_label("L").count()).returning(["c"])
    assert (PreEncodedRequest.read(no_params).with_json_parameters({}).to_json_bytes()
            == hx.QueryRequest.read(no_params).to_json_bytes())


@pytest.mark.parametrize("bad", [math.nan, math.inf, b"bytes"])
def test_pre_encoded_parameters_refuse_what_the_sdk_refuses(bad: object) -> None:
    with pytest.raises(TypeError):
        PreEncodedRequest.write(_write_batch()).with_json_parameters({"rows": [{"id": "a", "v": [bad]}]})
    with pytest.raises(TypeError):
        PreEncodedRequest.write(_write_batch()).with_json_parameters({"": 1})


def test_fast_lowering_copies_the_same_bytes() -> None:
    native = pytest.importorskip("helixdb_uniffi.helixdb")
    lower = native._UniffiFfiConverterBytes.lower
    lift = native._UniffiFfiConverterBytes.lift
    payloads = [b"", b"x", os.urandom(100_000), "我对花生过敏".encode() * 5_000]
    assert install_fast_bytes_lowering()
    assert install_fast_bytes_lowering()  # installing twice is a no-op
    for payload in payloads:
        assert lift(lower(payload)) == payload
