"""Where Assay keeps things: settings, the database and its schema, blobs, the workspace,
projects and the import lock. Every other stage builds on this one; it imports none of them."""
