-- Secrets sealed (issue 14): the inventory holds no secret in clear. What a machine confirmed of
-- a secret file keeps a digest, not its content; a copy an older mesh kept is dropped to a
-- digest no content has, so the next plan shows the file as changed once and the push seals it.
-- (A generated secret an older mesh kept in clear in `secrets` is sealed to the operator's key
-- the first time it is read: SQL cannot seal.)
UPDATE confirmed
SET resource = json_set(resource, '$.content', '', '$.sealed', json_object('digest', 'kept in clear by an older mesh'))
WHERE json_extract(resource, '$.kind') = 'file'
  AND json_extract(resource, '$.secret') = 1
  AND json_extract(resource, '$.sealed') IS NULL;
