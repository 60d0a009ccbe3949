"""Gold items: list and editor (filled in by the workbench issue)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
