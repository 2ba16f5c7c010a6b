#!/usr/bin/env python3
"""Build the sample database of games, players, matches and scores.

The schema extends the games and players of `sqlive --demo` with the
matches each game was played in and the points each player scored in them:

    games(id, title)
    players(id, gameID -> games, name, score)      index players_gameID
    matches(id, gameID -> games, playedAt)         index matches_gameID
    scores(id, matchID -> matches, playerID -> players, points)
                                                   index scores_matchID

`scores.playerID` is deliberately left without an index, so that a game's
leaderboard (each player's total over all their matches) has to scan the
whole scores table until you add one:

    CREATE INDEX scores_playerID ON scores(playerID);

At the default scale the database holds about 240,000 rows (about 200,000
of them in scores, 7.5 MB) and takes a second or two to build. The same seed and scale always
build the same rows. The file keeps SQLite's default rollback journal, and
ends with ANALYZE, so that sqlite_stat1 guides the query planner.

Usage:

    python3 make_sample_db.py games.sqlite
    python3 make_sample_db.py --scale 0.1 small.sqlite
    python3 make_sample_db.py --seed 7 --force games.sqlite
"""

import argparse
import datetime
import os
import random
import sqlite3
import sys
import time

# Sizes at scale 1.
GAMES = 300
PLAYERS = 4_000
MATCHES = 40_000
# Players in one match: between these (at most the game's players).
MIN_SEATS, MAX_SEATS = 2, 8

SCHEMA = """
CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
CREATE TABLE players(
  id INTEGER PRIMARY KEY,
  gameID INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  score INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX players_gameID ON players(gameID);
CREATE TABLE matches(
  id INTEGER PRIMARY KEY,
  gameID INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
  playedAt TEXT NOT NULL
);
CREATE INDEX matches_gameID ON matches(gameID);
CREATE TABLE scores(
  id INTEGER PRIMARY KEY,
  matchID INTEGER NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
  playerID INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
  points INTEGER NOT NULL
);
CREATE INDEX scores_matchID ON scores(matchID);
-- No index on scores(playerID): the sample's slow query needs one.
"""

# The demo's games and its first game's players come first, so that the
# demo's queries and the tour's examples work here too.
DEMO_GAMES = ["Family gin rummy", "Weekly poker night", "Mahjong with grandma"]
DEMO_PLAYERS = [(1, "Blob"), (1, "Blob Jr"), (1, "Blob Sr")]

OCCASIONS = [
    "Family", "Weekly", "Friday", "Saturday", "Sunday", "Office", "Lunchtime",
    "Late-night", "Holiday", "Neighbourhood", "Club", "Beach", "Camping",
    "Rainy-day", "Monthly", "School", "Pub", "Online", "Championship", "Casual",
]
GAME_KINDS = [
    "gin rummy", "poker night", "bridge", "mahjong", "chess", "go", "backgammon",
    "scrabble", "canasta", "cribbage", "dominoes", "euchre", "hearts", "spades",
    "whist", "checkers", "catan", "carcassonne", "ticket to ride", "pinochle",
]
FIRST_NAMES = [
    "Ada", "Alan", "Alice", "Amir", "Ana", "Arjun", "Bea", "Ben", "Carla", "Chen",
    "Dara", "David", "Elif", "Emma", "Farid", "Fatima", "Grace", "Hana", "Hugo",
    "Ines", "Ivan", "Jade", "Jonas", "Kai", "Kenji", "Lara", "Leo", "Lina", "Luca",
    "Maya", "Mei", "Nadia", "Noah", "Olga", "Omar", "Paula", "Priya", "Quinn",
    "Rosa", "Sam", "Sara", "Sven", "Tara", "Theo", "Uma", "Vera", "Wei", "Yara",
    "Yusuf", "Zoe",
]
LAST_NAMES = [
    "Abe", "Berg", "Costa", "Diaz", "Eriksen", "Fischer", "Garcia", "Haddad",
    "Ito", "Jensen", "Kowalski", "Lopez", "Meyer", "Nakamura", "Okafor", "Patel",
    "Quist", "Rossi", "Silva", "Tanaka", "Umar", "Vargas", "Weber", "Xu", "Yilmaz",
    "Zhang",
]


def game_titles(count, rng):
    """The demo's titles, then occasion + kind pairs in a shuffled order."""
    pairs = [f"{occasion} {kind}" for occasion in OCCASIONS for kind in GAME_KINDS]
    pairs = [title for title in pairs if title not in DEMO_GAMES]
    rng.shuffle(pairs)
    titles = DEMO_GAMES + pairs
    # Beyond every pair (scale above 1), number the rounds.
    return [
        titles[i] if i < len(titles) else f"{titles[i % len(titles)]} {i // len(titles) + 1}"
        for i in range(count)
    ]


def insert_rows(connection, rng, scale):
    """Inserts every row; returns the number of rows per table."""
    game_count = max(len(DEMO_GAMES), round(GAMES * scale))
    player_count = max(len(DEMO_PLAYERS) + 2 * game_count, round(PLAYERS * scale))
    match_count = max(1, round(MATCHES * scale))

    games = list(enumerate(game_titles(game_count, rng), start=1))
    connection.executemany("INSERT INTO games(id, title) VALUES (?, ?)", games)

    # Players: the demo's, then two per game so that every game can be
    # played, then the rest spread unevenly (some games are popular).
    assignments = [game for game, _ in DEMO_PLAYERS]
    names = [name for _, name in DEMO_PLAYERS]
    for game_id in range(1, game_count + 1):
        assignments += [game_id, game_id]
    popularity = [rng.uniform(0.2, 3.0) for _ in range(game_count)]
    remaining = player_count - len(assignments)
    assignments += rng.choices(range(1, game_count + 1), weights=popularity, k=remaining)
    while len(names) < len(assignments):
        names.append(f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}")
    players_of_game = {game_id: [] for game_id in range(1, game_count + 1)}
    for player_id, game_id in enumerate(assignments, start=1):
        players_of_game[game_id].append(player_id)

    # Matches: games with more players are played more often, over two
    # years; ids follow the time they were played.
    start = datetime.datetime(2023, 1, 1)
    seconds = 2 * 365 * 24 * 3600
    times = sorted(rng.randrange(seconds) for _ in range(match_count))
    weights = [len(players_of_game[game_id]) for game_id in range(1, game_count + 1)]
    match_games = rng.choices(range(1, game_count + 1), weights=weights, k=match_count)
    played_at = [
        (start + datetime.timedelta(seconds=offset)).strftime("%Y-%m-%d %H:%M:%S")
        for offset in times
    ]
    matches = list(zip(range(1, match_count + 1), match_games, played_at))

    # Scores: a few of the game's players in each match, and their points.
    totals = [0] * (len(assignments) + 1)
    scores = []
    for match_id, game_id, _ in matches:
        seated = players_of_game[game_id]
        seats = rng.randint(MIN_SEATS, min(MAX_SEATS, len(seated)))
        for player_id in rng.sample(seated, seats):
            points = rng.randint(0, 100)
            totals[player_id] += points
            scores.append((len(scores) + 1, match_id, player_id, points))

    # A player's score is their total points when the database was built.
    connection.executemany(
        "INSERT INTO players(id, gameID, name, score) VALUES (?, ?, ?, ?)",
        [
            (player_id, game_id, names[player_id - 1], totals[player_id])
            for player_id, game_id in enumerate(assignments, start=1)
        ],
    )
    connection.executemany("INSERT INTO matches(id, gameID, playedAt) VALUES (?, ?, ?)", matches)
    connection.executemany(
        "INSERT INTO scores(id, matchID, playerID, points) VALUES (?, ?, ?, ?)", scores)
    return {
        "games": len(games),
        "players": len(assignments),
        "matches": len(matches),
        "scores": len(scores),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Build the sample database of games, players, matches and scores.")
    parser.add_argument("path", help="the database file to create")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default: 42)")
    parser.add_argument(
        "--scale", type=float, default=1.0,
        help="multiplies the number of rows (default: 1, about 240,000 rows)")
    parser.add_argument("--force", action="store_true", help="replace the file if it exists")
    arguments = parser.parse_args(argv)
    if arguments.scale <= 0:
        parser.error("--scale must be greater than 0")
    if os.path.exists(arguments.path) and not arguments.force:
        parser.error(f"{arguments.path} exists; pass --force to replace it")
    if not os.path.isdir(os.path.dirname(os.path.abspath(arguments.path))):
        parser.error(f"no directory for {arguments.path}")

    began = time.monotonic()
    # Build next to the destination, then move it into place: an interrupted
    # build leaves no half-made database behind.
    partial = arguments.path + ".partial"
    for leftover in (partial, partial + "-journal"):
        if os.path.exists(leftover):
            os.remove(leftover)
    connection = sqlite3.connect(partial, isolation_level=None)
    try:
        connection.execute("PRAGMA foreign_keys = ON")
        connection.executescript(SCHEMA)
        connection.execute("BEGIN")
        counts = insert_rows(connection, random.Random(arguments.seed), arguments.scale)
        connection.execute("COMMIT")
        connection.execute("ANALYZE")
        problems = connection.execute("PRAGMA foreign_key_check").fetchall()
        if problems:
            raise RuntimeError(f"foreign key violations: {problems[:5]}")
        connection.close()
    except BaseException:
        connection.close()
        os.remove(partial)
        raise
    for leftover in (arguments.path + "-journal", arguments.path + "-wal", arguments.path + "-shm"):
        if os.path.exists(leftover):
            os.remove(leftover)
    os.replace(partial, arguments.path)

    size = os.path.getsize(arguments.path)
    print(f"{arguments.path}: seed {arguments.seed}, scale {arguments.scale:g}, "
          f"built in {time.monotonic() - began:.1f} s")
    for table, count in counts.items():
        print(f"  {table:<8} {count:>9,} rows")
    print(f"  {'total':<8} {sum(counts.values()):>9,} rows, {size / 1_000_000:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
