-- explain.sql: why a game's leaderboard is slow, and the index that fixes it.
--
--   python3 Samples/databases/make_sample_db.py games.sqlite
--   sqlive games.sqlite -f Samples/scripts/explain.sql
--
-- `.explain` prints the query plan (SQLite's EXPLAIN QUERY PLAN, as a tree)
-- without running the query. Before the index, `SCAN s` reads all of
-- scores (about 200,000 rows) for each of the game's players; with
-- scores_playerID, `SEARCH s USING INDEX scores_playerID` reads only theirs.
-- `--advise` asks SQLite's planner which index would help (as sqlite3's
-- `.expert` does) without changing the database.
-- The script creates the index, then drops it: the database ends with the
-- indexes it had, listed at the end.

.print "-- without an index on scores(playerID), and the advice:"
.explain --advise SELECT p.name, count(*) AS matches, sum(s.points) AS points FROM players p JOIN scores s ON s.playerID = p.id WHERE p.gameID = 3 GROUP BY p.id ORDER BY points DESC

CREATE INDEX scores_playerID ON scores(playerID);
.print
.print "-- with it:"
.explain SELECT p.name, count(*) AS matches, sum(s.points) AS points FROM players p JOIN scores s ON s.playerID = p.id WHERE p.gameID = 3 GROUP BY p.id ORDER BY points DESC
DROP INDEX scores_playerID;

.print
.print "-- the indexes at the end:"
SELECT name FROM sqlite_schema WHERE type = 'index' ORDER BY name;
