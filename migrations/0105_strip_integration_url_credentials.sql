-- Integrations created before URLs with credentials were refused kept `user:password@` in clear
-- config values (base_url, Odoo's url), which every member of the company can read; the
-- connectors refused to call such an address anyway. Keep the address, drop the credentials.
UPDATE integrations i
   SET config = (
         SELECT jsonb_object_agg(
                  e.key,
                  CASE
                    WHEN jsonb_typeof(e.value) = 'string'
                     AND e.value #>> '{}' ~ '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#[:space:]]*@'
                    THEN to_jsonb(regexp_replace(e.value #>> '{}', '^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#[:space:]]*@', '\1'))
                    ELSE e.value
                  END)
           FROM jsonb_each(i.config) e)
 WHERE EXISTS (
         SELECT 1
           FROM jsonb_each(i.config) e
          WHERE jsonb_typeof(e.value) = 'string'
            AND e.value #>> '{}' ~ '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#[:space:]]*@');
