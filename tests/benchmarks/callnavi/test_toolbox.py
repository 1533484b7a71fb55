from __future__ import annotations

from pathlib import Path

from freyr_dspy.benchmarks.callnavi import ApiSpec, available_domains, callnavi_dir, load_domain
from freyr_dspy.benchmarks.callnavi._toolbox import (
    MISC_LIBRARY,
    api_tool,
    api_topics,
    derive_libraries,
    make_toolbox,
    render_api,
    render_catalog,
)
from tests.support.paths import DATA_DIR

FIXTURES = DATA_DIR / "callnavi"


def spec(name: str, description: str = "", **parameters: object) -> ApiSpec:
    return ApiSpec(name=name, description=description, parameters=dict(parameters))


def test_topics_drop_the_verb_and_generic_words() -> None:
    assert api_topics("getCreditCardStatement") == ["credit", "card", "statement"]
    assert api_topics("getATMCardList") == ["atm", "card"]
    assert api_topics("getAccountIDfromName") == ["account", "name"]
    assert api_topics("applyForLoan") == ["loan"]
    assert api_topics("getSavedSearches") == ["saved", "search"]
    assert api_topics("checkout") == ["checkout"]  # a bare verb is its own topic


def test_libraries_group_apis_by_shared_topic_and_place_the_rest() -> None:
    apis = [
        spec("getLoanDetails"),
        spec("applyForLoan"),
        spec("makeLoanPayment"),
        spec("getCardList"),
        spec("blockCard"),
        spec("getPaymentHistory", "payments made on a loan"),
        spec("getWeather", "sunshine forecast"),
    ]
    libraries, descriptions = derive_libraries(apis)
    assert libraries["card"] == ["getCardList", "blockCard"]
    # "loan" (3 APIs) is grouped before "payment" (2); the leftover getPaymentHistory then
    # joins the library whose topics share a word with its name ("payment" of makeLoanPayment)
    assert libraries["loan"] == [
        "getLoanDetails",
        "applyForLoan",
        "makeLoanPayment",
        "getPaymentHistory",
    ]
    assert libraries[MISC_LIBRARY] == ["getWeather"]  # nothing in common with anything
    assert descriptions["loan"].startswith("4 APIs about loan (")
    every = [name for names in libraries.values() for name in names]
    assert sorted(every) == sorted(a.name for a in apis)  # each API in exactly one library


def test_a_word_every_name_shares_does_not_collapse_the_catalog_into_one_library() -> None:
    # An insurer's catalog: every name says "Policy", which names the domain, not a topic.
    apis = [
        spec("getPolicyQuote"),
        spec("comparePolicyQuotes"),
        spec("acceptPolicyQuote"),
        spec("filePolicyClaim"),
        spec("getPolicyClaimStatus"),
        spec("appealPolicyClaim"),
        spec("getPolicyPremium"),
        spec("payPolicyPremium"),
        spec("renewPolicy"),
    ]
    libraries, _ = derive_libraries(apis)
    assert "policy" not in libraries or len(libraries["policy"]) < len(apis) / 2
    assert libraries["quote"] == ["getPolicyQuote", "comparePolicyQuotes", "acceptPolicyQuote"]
    assert libraries["claim"] == ["filePolicyClaim", "getPolicyClaimStatus", "appealPolicyClaim"]
    assert libraries["premium"] == ["getPolicyPremium", "payPolicyPremium"]
    every = [name for names in libraries.values() for name in names]
    assert sorted(every) == sorted(a.name for a in apis)


def test_a_small_catalog_may_share_one_word() -> None:
    # Below six APIs a shared word is a fine library: there is nothing to gate.
    libraries, _ = derive_libraries([spec("getLoanDetails"), spec("applyForLoan")])
    assert libraries == {"loan": ["getLoanDetails", "applyForLoan"]}


def test_api_tools_are_spec_only_with_types_from_the_hints() -> None:
    tool = api_tool(
        spec(
            "bookGrooming",
            "Book it.",
            petID="string",
            weight="number",
            service="bath/trim/full",
            details={"a": "string"},
        )
    )
    assert tool.func is None
    types = {p.name: (p.type, p.description) for p in tool.parameters}
    assert types["petID"] == ("string", "")
    assert types["weight"] == ("number", "")
    assert types["service"] == ("string", "one of bath/trim/full")
    assert types["details"] == ("object", "an object: {a: string}")
    assert all(p.required for p in tool.parameters)


def test_renderings_at_each_level() -> None:
    pets = make_toolbox(load_domain(FIXTURES, "pets"))
    register = pets.get("registerPet")
    assert render_api(register, "names") == "- registerPet"
    assert render_api(register, "brief") == "- registerPet: Register a new pet for an owner."
    assert render_api(register, "full") == (
        "- registerPet(ownerID: string, petDetails: {name: string, species: cat/dog/..., "
        "age: number}) -> PetID, RegistrationStatus: Register a new pet for an owner."
    )
    paper = render_api(register, "paper")
    assert "def registerPet(" in paper and "ownerID (str)petDetails (str)" in paper
    assert "PetID: string" in paper  # braces and quotes of the return object removed
    sizes = [len(render_catalog(pets, level)) for level in ("names", "brief", "full", "paper")]
    assert sizes == sorted(sizes)


def test_name_list_parameters_render_without_types() -> None:
    phones = make_toolbox(load_domain(FIXTURES, "phones"))
    assert render_api(phones.get("changePlan"), "full").startswith(
        "- changePlan(customerID, newPlanID) -> ChangeStatus"
    )
    assert "def changePlan('customerID', 'newPlanID')" in render_api(
        phones.get("changePlan"), "paper"
    )
    assert render_api(phones.get("listPlans"), "full").startswith("- listPlans() -> PlanList")


def test_real_catalogs_get_a_short_library_list(data_dir: Path) -> None:
    """Gating must shrink 80-100 API catalogs to a list a small model can read."""
    folder = callnavi_dir(data_dir)
    for domain in available_domains(folder):
        box = make_toolbox(load_domain(folder, domain))
        libraries = box.libraries
        assert sum(len(v) for v in libraries.values()) == len(box)
        assert len(libraries) <= max(6, len(box) // 4), domain
        if len(box) > 40:
            assert len(box.library_catalog()) < len(render_catalog(box, "names")), domain
