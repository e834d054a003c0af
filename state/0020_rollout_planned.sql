-- What the rollout planned to send each node (a digest of its declaration's resources), so that
-- `push --resume` sends what was planned or refuses, naming the nodes whose declaration changed
-- since (issue 45). NULL: a rollout begun before this was kept.
ALTER TABLE rollout_nodes ADD COLUMN planned TEXT;
