-- Website documents uploaded before uploads refused credentials kept `user:password@` in
-- source_url, which every member of the company can read. Keep the address, drop the credentials.
UPDATE kb_documents
   SET source_url = regexp_replace(source_url, '^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@', '\1')
 WHERE source_url ~ '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#@]*@';
