-- Indexes for the reads a plan or push of the whole fleet makes once per node (issue 15): without
-- them each is a scan of the table, and a plan of N nodes costs N scans.

-- A node's last push and its last report: `WHERE node = ? ORDER BY id DESC LIMIT 1`.
CREATE INDEX pushes_by_node ON pushes (node, id);

-- The providers of a provision: the assignments of the modules that provide it.
CREATE INDEX assignments_by_module ON assignments (module, node, instance);
