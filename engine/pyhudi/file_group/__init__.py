"""Hudi's data files and how they group: the on-disk formats pyhudi writes bit-compatibly with Java Hudi.

    naming            base, log and marker file names (file id, write token, instant, log version)
    model             file groups and file slices (a base file and the log files written after it)
    parquet_settings  how base files and parquet log blocks are encoded
    base_file         parquet base files: `_hoodie_*` meta columns first, the bloom filter and key range in the footer
    footer_scan       a few footer entries read without parsing the whole footer
    bloom_filter/     Hudi's record-key bloom filters (hand-written for bit compatibility with Java)
    log_block/        `#HUDI#` log blocks: the model and the Avro / parquet / delete content codecs
    log_file          log files: reading and writing their blocks
    log_writer        a slice's log output, rolled to the next version at hoodie.logfile.max.size
"""
