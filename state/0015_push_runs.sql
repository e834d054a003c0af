-- Push runs (issue 22): every row one `mesh` command (a push, a rollback, a check that found a
-- machine new) writes into `pushes` carries that command's own random run id, so the nodes of
-- one push are told apart from another's begun in the same second (`mesh rollback --push ID`).
-- Rows written before it have none: they are grouped by the second they began, as before.
ALTER TABLE pushes ADD COLUMN run TEXT;
CREATE INDEX pushes_run ON pushes (run);
