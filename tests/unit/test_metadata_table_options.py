"""The metadata table's service settings come from the data writer's options as Java derives its metadata writer's
config (HoodieMetadataWriteUtils.createMetadataWriteConfig): the cleaner policy borrowed with 1.2x its retention (at
least 20 commits), archival at the data table's hoodie.keep.min/max.commits + 1, compaction every
hoodie.metadata.compact.max.delta.commits delta commits."""

from __future__ import annotations

import pytest

from pyhudi.commit.metadata_table.options import MetadataTableOptions
from pyhudi.errors import ConfigError


def test_hudis_defaults_without_options():
    options = MetadataTableOptions.of(None)
    assert options == MetadataTableOptions()
    assert (options.compact_max_delta_commits, options.cleaner_policy, options.commits_retained) == (
        10, "KEEP_LATEST_COMMITS", 20)
    assert (options.keep_min_commits, options.keep_max_commits) == (21, 31)


@pytest.mark.parametrize("retained, expected", [("5", 20), ("16", 20), ("17", 20), ("20", 24), ("30", 36)])
def test_commits_retained_is_the_larger_of_20_and_1_2_times_the_data_tables(retained, expected):
    options = MetadataTableOptions.of({"hoodie.cleaner.commits.retained": retained,
                                       "hoodie.keep.min.commits": "40", "hoodie.keep.max.commits": "50"})
    assert options.commits_retained == expected
    assert (options.keep_min_commits, options.keep_max_commits) == (41, 51)
    assert options.clean_options().commits_retained == expected


def test_the_data_tables_policy_is_borrowed_with_1_2_times_its_retention():
    versions = MetadataTableOptions.of({"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                        "hoodie.cleaner.fileversions.retained": "3"})
    assert (versions.cleaner_policy, versions.file_versions_retained) == ("KEEP_LATEST_FILE_VERSIONS", 4)
    hours = MetadataTableOptions.of({"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS",
                                     "hoodie.cleaner.hours.retained": "10"})
    assert (hours.cleaner_policy, hours.hours_retained) == ("KEEP_LATEST_BY_HOURS", 12)
    assert hours.clean_options().policy == "KEEP_LATEST_BY_HOURS"


def test_compaction_setting_and_a_bad_value():
    assert MetadataTableOptions.of({"hoodie.metadata.compact.max.delta.commits": "3"}).compact_max_delta_commits == 3
    with pytest.raises(ConfigError, match="hoodie.metadata.compact.max.delta.commits"):
        MetadataTableOptions.of({"hoodie.metadata.compact.max.delta.commits": "0"})
