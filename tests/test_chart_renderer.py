"""Charts are drawn by vl-convert at the Vega-Lite version altair writes (issue 22, item 3)."""
from __future__ import annotations

import altair as alt
import pandas as pd
import vl_convert as vlc

from widgets import charts


def test_vl_convert_carries_the_vega_lite_version_altair_writes():
    # the pyproject pins keep this pair in step; a fresh install that drifted fails here
    assert charts.vega_lite_version() == "v" + "_".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    assert charts.vega_lite_version().lstrip("v").replace("_", ".") in vlc.get_vegalite_versions()


def test_a_chart_is_shown_as_svg_and_never_handed_to_an_older_vega_lite_renderer():
    chart = alt.Chart(pd.DataFrame({"offset": [1, 2]}), title="t").mark_bar().encode(x="offset:Q")
    bundle = chart._repr_mimebundle_()
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle
    assert set(bundle) == {"image/svg+xml", "text/plain"}
    assert bundle["image/svg+xml"].lstrip().startswith("<svg") and "offset" in bundle["image/svg+xml"]
    assert not [k for k in bundle if "vegalite" in k or "vega." in k]
