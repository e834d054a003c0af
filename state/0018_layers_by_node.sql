-- A node's own layers, read in one query per node by a plan of the fleet (issue 25): the table's
-- key is (module, node), so `WHERE node = ?` without this index reads every layer, and a plan of
-- N nodes would cost N scans. Removing a node (`DELETE FROM layers WHERE node = ?`) uses it too.
CREATE INDEX layers_by_node ON layers (node, module);
