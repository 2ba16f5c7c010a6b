"""What the tests and the side-by-side comparison share: the database they
start from, and what a refused attempt must leave as it was."""

import hashlib
import pathlib
import sqlite3


def make_database(path: pathlib.Path, journal_mode: str = "delete") -> None:
    """A small database at SQLite's default settings (or in WAL mode)."""
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA journal_mode = {journal_mode}")
    with db:
        db.executescript(
            """
            CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INT, photo BLOB);
            CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT, playerID INT REFERENCES players(id));
            CREATE INDEX games_player ON games(playerID);
            CREATE VIEW leaders AS SELECT name, score FROM players ORDER BY score DESC;
            INSERT INTO players(name, score, photo) VALUES ('Ann', 12, x'00ff'), ('Bob', 7, NULL);
            INSERT INTO games(title, playerID) VALUES ('Go', 1), ('Chess', 2);
            """
        )
    db.close()


def fingerprint(directory: pathlib.Path, database: pathlib.Path):
    """The database file's bytes and the directory's file names: what a refused
    attempt must leave as it was."""
    return hashlib.sha256(database.read_bytes()).hexdigest(), sorted(p.name for p in directory.iterdir())
