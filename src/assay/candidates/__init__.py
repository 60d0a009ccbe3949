"""Production questions in: query logs and traces imported as candidates (not gold), scrubbed
of personal data, folded into groups of the same question, clustered by topic, sampled by a
documented policy into gold work, and the coverage of the gold seen against them.

docs/production-to-gold.md is the guide; docs/formats.md describes the log shapes.
"""
