"""Documents in, text out: parsing, stored documents, chunkers and chunkings, ingest, and
where a passage (evidence) sits in a document's text."""
