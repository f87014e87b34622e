"""Columns built for bulk inserts hold exactly what pyarrow's own conversion gives (tools/columns.py)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

from pathlib import Path

import numpy as np
import pyarrow as pa

from tools import columns

ROOT = Path(__file__).resolve().parent.parent


def test_strings_keep_every_character_and_every_missing_value():
    values = ["plain", "", None, "héllo — 调用", "a\x00b", None]
    assert columns.strings(values).to_pylist() == values
    assert columns.strings([]).to_pylist() == []


def test_timestamps_are_the_same_instants_in_utc_and_a_naive_time_is_read_as_utc():
    plus8 = timezone(timedelta(hours=8))
    values = [datetime(2026, 4, 29, 10, 35, 0, 123456, tzinfo=plus8), None, datetime(1969, 12, 31, 23, 59, 59),
              datetime(2026, 4, 29, 2, 35, tzinfo=UTC)]
    got = columns.timestamps(values)
    assert got.type == pa.timestamp("us", tz="UTC")
    assert got.equals(pa.array(values, pa.timestamp("us", tz="UTC")))


def test_integers_and_vectors_are_the_values_given():
    assert columns.int32s([0, -3, 2**31 - 1]).to_pylist() == [0, -3, 2**31 - 1]
    mat = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    got = columns.vectors(mat, 4)
    assert got.type == pa.list_(pa.float32(), 4)
    assert np.array_equal(np.array(got.to_pylist(), dtype=np.float32), mat)


def test_building_a_table_never_imports_pandas():
    code = ("import sys; from datetime import datetime; import numpy as np; from tools import columns; "
            "columns.table({'s': columns.strings(['a', None]), 'i': columns.int32s([1, 2]), "
            "'t': columns.timestamps([None, datetime(2026, 1, 1)]), 'v': columns.vectors(np.ones((2, 3)), 3)}); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False", "pandas costs every index build half a second to import"
