-- Documents read by OCR (scanned PDF pages, images): how many pages, and the mean confidence
-- (0–100) tesseract gave their words. Null for documents with a text layer.
alter table kb_documents
  add column ocr_pages integer,
  add column ocr_confidence real;
