"""Third-party data files shipped inside Assay, each folder with a MANIFEST naming its source."""
