"""Which incarnation of a peer's TensorFlow server answers at its address.

Every TensorFlow server process gives its devices random 64-bit incarnation ids
when it starts; collectives remember the ids of the peers they were formed with,
and a restarted peer (same address, new ids) can never join them. A process that
answers at a peer's address with other ids than before is therefore a restart,
seen at once, where a TCP probe only sees "someone answers".

The ids are read with the worker service's `GetStatus` call (the call TensorFlow's
own device resolution makes), sent with grpcio, which TensorFlow's wheels depend on.
The reply is decoded here from the protocol buffer wire format (two fields are
read), so no TensorFlow-internal module is needed. Without grpcio, or when the
peer does not answer in time, the answer is None: unknown, never a restart.
"""

__all__ = ["incarnation", "decode_incarnations"]

_GET_STATUS = "/tensorflow.WorkerService/GetStatus"
_TIMEOUT_SECS = 1.0
# GetStatusResponse.device_attributes = 1; DeviceAttributes.name = 1, .incarnation = 6.
_DEVICE_ATTRIBUTES_FIELD = 1
_NAME_FIELD = 1
_INCARNATION_FIELD = 6
_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


_GRPC = []  # [the grpc module or None] once looked up (the watchdog asks every second)


def _grpc():
    """The grpc module, or None when it is not installed."""
    if not _GRPC:
        try:
            import grpc  # noqa: PLC0415 (a TensorFlow dependency; collective jobs only)
        except ImportError:
            grpc = None
        _GRPC.append(grpc)
    return _GRPC[0]


def _identity(data):
    return data


def incarnation(address, timeout_secs=_TIMEOUT_SECS):
    """The incarnation ids of the server at `address`, or None if unknown.

    Args:
      address: 'host:port' of a TensorFlow server (a task of the cluster spec).
      timeout_secs: how long to wait for the answer (a peer that accepts
        connections but does not answer is not a restart).

    Returns:
      A tuple of (device name, incarnation id) pairs sorted by name, or None when
      the server did not answer, its answer could not be read, or grpcio is missing.
    """
    grpc = _grpc()
    if grpc is None:
        return None
    # No HTTP proxy from the environment: the cluster's addresses are direct.
    options = [("grpc.enable_http_proxy", 0)]
    try:
        with grpc.insecure_channel(address, options=options) as channel:
            get_status = channel.unary_unary(
                _GET_STATUS, request_serializer=_identity, response_deserializer=_identity)
            reply = get_status(b"", timeout=timeout_secs)
    except (grpc.RpcError, ValueError):
        return None
    try:
        return decode_incarnations(reply) or None
    except ValueError:
        return None


def decode_incarnations(reply):
    """(device name, incarnation) pairs of a serialized GetStatusResponse, by name.

    Raises:
      ValueError: `reply` is not a well-formed protocol buffer.
    """
    devices = []
    for number, _, value in _fields(reply):
        if number != _DEVICE_ATTRIBUTES_FIELD or not isinstance(value, bytes):
            continue
        name, incarnation_id = "", None
        for field, _, item in _fields(value):
            if field == _NAME_FIELD and isinstance(item, bytes):
                name = item.decode("utf-8", "replace")
            elif field == _INCARNATION_FIELD:
                incarnation_id = item
        if incarnation_id is not None:
            devices.append((name, incarnation_id))
    return tuple(sorted(devices))


def _varint(data, position):
    result = shift = 0
    while True:
        if position >= len(data):
            raise ValueError("truncated varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _fields(data):
    """Yields (field number, wire type, value) of one serialized message."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == _VARINT:
            value, position = _varint(data, position)
        elif wire_type in (_FIXED64, _FIXED32):
            size = 8 if wire_type == _FIXED64 else 4
            value = int.from_bytes(data[position:position + size], "little")
            position += size
        elif wire_type == _LENGTH:
            size, position = _varint(data, position)
            value = bytes(data[position:position + size])
            position += size
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
        if position > len(data):
            raise ValueError("truncated field")
        yield number, wire_type, value
