"""The model config's ``price`` key and the price lookup preview and budget share."""

from __future__ import annotations

import pytest

from trustsim.errors import ConfigError
from trustsim.llm.config import ModelPrice, parse_model_config
from trustsim.llm.pricing import Price, price_of

BASE = {"name": "m", "litellm_model": "openai/my-new-model"}


def test_price_in_a_model_config_is_parsed_and_used() -> None:
    model = parse_model_config({**BASE, "price": {"input_per_mtok": 2, "output_per_mtok": 8.5}})
    assert model.price == ModelPrice(input_per_mtok=2.0, output_per_mtok=8.5)
    price = price_of(model)
    assert price == Price(2.0, 8.5, "config")
    assert price.cost(1_000_000, 2_000_000) == pytest.approx(2.0 + 17.0)


def test_a_config_price_overrides_litellms_map() -> None:
    listed = parse_model_config({"name": "g", "litellm_model": "openai/gpt-5.1-2025-11-13"})
    mapped = price_of(listed)
    assert mapped is not None and mapped.source == "litellm" and mapped.entry == "gpt-5.1-2025-11-13"
    assert (mapped.input_per_mtok, mapped.output_per_mtok) == pytest.approx((1.25, 10.0))
    own = parse_model_config(
        {
            "name": "g",
            "litellm_model": "openai/gpt-5.1-2025-11-13",
            "price": {"input_per_mtok": 0, "output_per_mtok": 0},
        }
    )
    assert price_of(own) == Price(0.0, 0.0, "config")


def test_unknown_models_have_no_price_and_local_models_are_free() -> None:
    assert price_of(parse_model_config(BASE)) is None
    local = parse_model_config({"name": "smollm2", "litellm_model": "trustsim/smollm2", "provider": "local"})
    assert price_of(local) == Price(0.0, 0.0, "local")


@pytest.mark.parametrize(
    ("price", "key", "says"),
    [
        ({"input_per_mtok": 1}, "model.price.output_per_mtok", "missing"),
        ({"input_per_mtok": 1, "output_per_mtok": -2}, "model.price.output_per_mtok", ">= 0"),
        ({"input_per_mtok": "cheap", "output_per_mtok": 2}, "model.price.input_per_mtok", "number"),
        ({"input_per_mtok": True, "output_per_mtok": 2}, "model.price.input_per_mtok", "number"),
        (
            {"input_per_mtk": 1, "output_per_mtok": 2},
            "model.price.input_per_mtk",
            "did you mean 'model.price.input_per_mtok'",
        ),
        (3.5, "model.price", "expected"),
    ],
)
def test_a_bad_price_is_a_config_error_naming_the_key(price: object, key: str, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_model_config({**BASE, "price": price})
    assert err.value.key == key
    assert says in str(err.value)
