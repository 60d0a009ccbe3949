"""Reading one uploaded file from a multipart request, with the size limit enforced while reading.

Starlette's form parser spools a whole upload before a route sees it, so a client could send
gigabytes. Here the body is parsed as it streams in: as soon as the file part grows past the
limit, reading stops and the route answers 413. Content-Length is not trusted (it may be absent
or wrong); only the bytes actually received count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from assay.errors import InvalidInput
from assay.web.render import translator

FIELD_LIMIT = 4096
"""Largest plain form field kept (for example ``last_modified``); longer ones are cut."""
NAME_LIMIT = 255
"""Longest file name accepted, in characters (what common file systems allow)."""


@dataclass
class Upload:
    """The file part of a multipart request and its small text fields."""

    filename: str = ""
    data: bytearray = field(default_factory=bytearray)
    fields: dict[str, str] = field(default_factory=dict)
    too_large: bool = False
    received: int = 0
    """Bytes of the file part received before reading stopped."""


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    header_name: bytes = b""
    header_value: bytes = b""
    name: str = ""
    is_file: bool = False
    value: bytearray = field(default_factory=bytearray)


class _Collector:
    """Callbacks for python-multipart: keeps the file part up to ``limit`` + 1 bytes."""

    def __init__(self, upload: Upload, file_field: str, limit: int) -> None:
        self.upload = upload
        self.file_field = file_field
        self.limit = limit
        self.part = _Part()
        self.files = 0

    def on_part_begin(self) -> None:
        self.part = _Part()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.part.header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.part.header_value += data[start:end]

    def on_header_end(self) -> None:
        self.part.headers[self.part.header_name.strip().lower()] = self.part.header_value
        self.part.header_name = self.part.header_value = b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.part.headers.get(b"content-disposition", b""))
        self.part.name = options.get(b"name", b"").decode("utf-8", "replace")
        filename = options.get(b"filename")
        if filename is not None and self.part.name == self.file_field:
            self.files += 1
            if self.files > 1:
                raise InvalidInput("send one file per request (this one had several)")
            self.part.is_file = True
            self.upload.filename = filename.decode("utf-8", "replace")
            if len(self.upload.filename) > NAME_LIMIT:
                raise InvalidInput(
                    f"the file name is {len(self.upload.filename)} characters long; "
                    f"rename the file to at most {NAME_LIMIT} characters"
                )

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.part.is_file:
            self.upload.received += end - start
            if self.upload.received > self.limit:
                self.upload.too_large = True
            else:
                self.upload.data += data[start:end]
        elif len(self.part.value) < FIELD_LIMIT:
            self.part.value += data[start:end]

    def on_part_end(self) -> None:
        if not self.part.is_file and self.part.name:
            self.upload.fields[self.part.name] = self.part.value[:FIELD_LIMIT].decode(
                "utf-8", "replace"
            )


async def read_upload(request: Request, limit: int, file_field: str = "file") -> Upload:
    """The single file sent as ``file_field``; stops reading once it exceeds ``limit`` bytes
    (then ``too_large`` is set and ``data`` is incomplete)."""
    content_type, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if content_type != b"multipart/form-data" or not boundary:
        raise InvalidInput(f"send the file as multipart/form-data in a field named {file_field!r}")
    upload = Upload()
    collector = _Collector(upload, file_field, limit)
    ended = False

    def on_end() -> None:
        nonlocal ended
        ended = True

    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": collector.on_part_begin,
            "on_header_field": collector.on_header_field,
            "on_header_value": collector.on_header_value,
            "on_header_end": collector.on_header_end,
            "on_headers_finished": collector.on_headers_finished,
            "on_part_data": collector.on_part_data,
            "on_part_end": collector.on_part_end,
            "on_end": on_end,
        },
    )
    try:
        async for chunk in request.stream():
            parser.write(chunk)
            if upload.too_large:
                return upload
        parser.finalize()
    except MultipartParseError as exc:
        if "header size" in str(exc):
            detail = (
                "the upload's part headers are over 4 KB; file names may have at most "
                f"{NAME_LIMIT} characters"
            )
        else:
            detail = f"the upload is not well-formed multipart/form-data: {exc}"
        raise HTTPException(400, detail) from exc
    if not ended:
        raise HTTPException(400, "the upload ended before its closing multipart boundary")
    if not collector.files:
        raise InvalidInput(f"no file was sent: expected one in the field {file_field!r}")
    return upload


def upload_body(fields: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """OpenAPI ``openapi_extra`` of an upload route: a multipart form with the binary
    ``file`` and ``fields`` (``required`` names those that must be sent besides the file)."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file", *required],
                        "properties": {"file": {"type": "string", "format": "binary"}, **fields},
                    }
                }
            },
        }
    }


def too_large(request: Request, message: str, name: str, limit_mb: float) -> JSONResponse:
    """413 whose detail is the catalog ``message`` naming the file and the limit in MB."""
    detail = translator(request)(message, name=name, limit=f"{limit_mb:g}")
    return JSONResponse({"detail": detail}, status_code=413)
