"""People: accounts, sessions, tokens, roles and the one place that decides who may do what.

Personal mode (the default) has one account, the local owner, that may do everything; team
mode requires accounts and checks every action against the actor's role in the project
(:mod:`assay.people.access`).
"""
