-- profile.sql: each statement's time and number of rows, with `.trace profile`.
--
--   python3 Samples/databases/make_sample_db.py games.sqlite
--   sqlive games.sqlite -f Samples/scripts/profile.sql
--
-- After each statement, `.trace profile` prints `-- trace: SQL (TIME, N rows, …)`.
-- Compare the leaderboard of game 3 (it scans every score for each of the
-- game's players: hundreds of milliseconds) with the same query once
-- scores_playerID exists (about a millisecond), and with the scores of one
-- match (scores_matchID already exists: fast). The index is created in a
-- transaction that is rolled back: the database is the same afterwards.

.trace profile

-- How big is it? Counting rows reads a whole table (its smallest index).
SELECT 'games', count(*) FROM games UNION ALL SELECT 'players', count(*) FROM players UNION ALL SELECT 'matches', count(*) FROM matches UNION ALL SELECT 'scores', count(*) FROM scores;

-- The scores of one match: scores_matchID makes it a search.
SELECT p.name, s.points FROM scores s JOIN players p ON p.id = s.playerID WHERE s.matchID = 1000 ORDER BY s.points DESC;

-- The leaderboard of game 3: slow, scores.playerID has no index.
SELECT p.name, count(*) AS matches, sum(s.points) AS points FROM players p JOIN scores s ON s.playerID = p.id WHERE p.gameID = 3 GROUP BY p.id ORDER BY points DESC LIMIT 5;

-- The same with an index on scores(playerID), then back to the original.
BEGIN;
CREATE INDEX scores_playerID ON scores(playerID);
SELECT p.name, count(*) AS matches, sum(s.points) AS points FROM players p JOIN scores s ON s.playerID = p.id WHERE p.gameID = 3 GROUP BY p.id ORDER BY points DESC LIMIT 5;
ROLLBACK;
