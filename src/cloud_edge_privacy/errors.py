"""Exceptions with messages that name the file, record and field at fault."""


class BenchmarkError(Exception):
    """Base class for every error this package raises on purpose."""


class DataValidationError(BenchmarkError):
    """Input data (TAB JSON, JSONL) is malformed; the message names file, document and field."""


class ConfigError(BenchmarkError):
    """A YAML configuration file is missing, malformed or inconsistent."""


class PrivacyGatewayError(BenchmarkError):
    """Detection or desensitization failed; nothing may be sent to the cloud."""


class CloudCallError(BenchmarkError):
    """The cloud endpoint could not be reached or rejected the request."""


class ModelFileError(BenchmarkError):
    """A model file is missing or its sha256 does not match the pinned value."""


class WordListError(BenchmarkError, LookupError):
    """A word list (``wordlists/<name>.txt``) is unknown or missing; the message names the file."""
