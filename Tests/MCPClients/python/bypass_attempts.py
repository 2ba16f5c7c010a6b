"""Statements an agent could send to a "read-only" SQLite MCP server to change
the database, another file, or the connection. Shared by the tests
(test_sqlive_mcp.py) and the side-by-side run against the reference server
(compare_reference.py, docs/mcp.md).

Each entry: (what it tries, the SQL). Every one must be refused, and leave the
database file's bytes and the directory's files as they were.
"""

ATTEMPTS = [
    ("plain write", "INSERT INTO players(name, score) VALUES ('Mallory', 99)"),
    ("write inside a CTE", "WITH x AS (SELECT 1) DELETE FROM players"),
    ("write with RETURNING", "DELETE FROM players RETURNING *"),
    ("write after a SELECT", "SELECT 1; DELETE FROM players"),
    ("write behind a comment", "/* SELECT */ DELETE FROM players"),
    ("write behind a line comment", "-- SELECT\nUPDATE players SET score = 0"),
    ("schema change", "DROP TABLE players"),
    ("schema table edit", "UPDATE sqlite_schema SET sql = 'CREATE TABLE players(x)' WHERE name = 'players'"),
    ("journal mode", "PRAGMA journal_mode = WAL"),
    ("writable_schema", "PRAGMA writable_schema = ON"),
    ("user_version", "PRAGMA user_version = 666"),
    ("checkpoint", "PRAGMA wal_checkpoint(TRUNCATE)"),
    ("query_only off", "PRAGMA query_only = OFF"),
    # Connection state that reports itself read-only: one agent must never
    # change what another agent, or the live engine, sees.
    ("locking_mode exclusive", "PRAGMA locking_mode = EXCLUSIVE"),
    ("soft_heap_limit", "PRAGMA soft_heap_limit = 1"),
    ("hard_heap_limit", "PRAGMA hard_heap_limit = 1"),
    ("cache_size", "PRAGMA cache_size = 1"),
    ("mmap_size", "PRAGMA mmap_size = 0"),
    ("busy_timeout", "PRAGMA busy_timeout = 60000"),
    ("temp_store", "PRAGMA temp_store = MEMORY"),
    ("case_sensitive_like", "PRAGMA case_sensitive_like = ON"),
    ("reverse_unordered_selects", "PRAGMA reverse_unordered_selects = ON"),
    ("automatic_index off", "PRAGMA automatic_index = OFF"),
    ("threads", "PRAGMA threads = 8"),
    ("trusted_schema on", "PRAGMA trusted_schema = ON"),
    ("recursive_triggers", "PRAGMA recursive_triggers = ON"),
    ("optimize", "PRAGMA optimize"),
    ("shrink_memory", "PRAGMA shrink_memory"),
    ("ATTACH a new file", "ATTACH DATABASE 'pwned.sqlite' AS pwned"),
    ("ATTACH after a SELECT", "SELECT 1; ATTACH DATABASE 'pwned.sqlite' AS pwned"),
    ("VACUUM INTO a new file", "VACUUM INTO 'copy.sqlite'"),
    ("VACUUM", "VACUUM"),
    ("load_extension", "SELECT load_extension('libc.so.6')"),
    ("temp table", "CREATE TEMP TABLE scratch(x)"),
    ("transaction left open", "BEGIN IMMEDIATE"),
    ("REINDEX", "REINDEX"),
    ("ANALYZE", "ANALYZE"),
]

# Reads a read-only server should answer.
READS = [
    ("SELECT", "SELECT name, score FROM players ORDER BY score DESC"),
    ("CTE", "WITH top AS (SELECT name FROM players WHERE score > 10) SELECT count(*) FROM top"),
    ("EXPLAIN QUERY PLAN", "EXPLAIN QUERY PLAN SELECT * FROM players WHERE score > 10"),
    ("PRAGMA that reads", "PRAGMA table_info(players)"),
    ("VALUES", "VALUES (1), (2)"),
]
