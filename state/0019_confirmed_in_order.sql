-- What a node's helper confirmed, read in its order by every plan of the node (issue 25): with
-- only the table's key (node, id), SQLite sorted each node's rows in a temporary b-tree, a sorter
-- opened (and its memory taken) once per node of the fleet. In this index they are in order.
CREATE INDEX confirmed_in_order ON confirmed (node, position, id);
