-- Local nodes (issue 26): a node added with `mesh node add NAME --local DIR` is not reached over
-- SSH; its helper runs as a child process of `mesh` on this machine against DIR, which stands
-- for the machine's `/`. NULL: a machine reached over SSH, as every node before.
ALTER TABLE nodes ADD COLUMN local TEXT;
