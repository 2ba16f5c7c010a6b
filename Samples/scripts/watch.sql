-- watch.sql: a live query re-prints when the data it reads changes.
--
--   python3 Samples/databases/make_sample_db.py games.sqlite
--   sqlive games.sqlite -f Samples/scripts/watch.sql
--
-- Registers the live query `leaders` (the top three of game 3, "Mahjong with
-- grandma": each player's matches and total points), then records a new
-- match in which Yusuf Meyer (third) scores 100 and Vera Berg (second) 10.
-- `.wait` waits for the re-print: `leaders v2 (local, coalesced 1)`, where
-- Yusuf has overtaken Vera. The script writes to the database (one match and
-- four scores): run it on a copy, or rebuild the database afterwards.
-- The player ids are those of the default build (seed 42, scale 1).

.watch leaders SELECT p.name, count(*) AS matches, sum(s.points) AS points FROM players p JOIN scores s ON s.playerID = p.id WHERE p.gameID = 3 GROUP BY p.id ORDER BY points DESC LIMIT 3

.print
.print "-- a new match of mahjong: Yusuf Meyer 100, Rosa Ito 90, Vera Berg 10, Fatima Garcia 0"
BEGIN;
INSERT INTO matches(gameID, playedAt) VALUES (3, '2025-01-01 20:00:00');
INSERT INTO scores(matchID, playerID, points) VALUES
  ((SELECT max(id) FROM matches), 3402, 100),
  ((SELECT max(id) FROM matches), 2589, 90),
  ((SELECT max(id) FROM matches), 2280, 10),
  ((SELECT max(id) FROM matches), 3955, 0);
COMMIT;

-- The write was committed by this session: the re-print says `local`.
.wait leaders --timeout 30
