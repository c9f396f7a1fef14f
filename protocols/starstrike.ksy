# Starstrike, described: the same protocol as lwarscope's built-in Starstrike
# analyzer (src/proto/starstrike/), from its specification and notes
# (starstrike-protocol.md, starstrike-NOTES.md beside it: the notes win).
#
# It is listed after the built-in, so by default the built-in takes every
# Starstrike datagram. Select this description for a port explicitly:
#   lwarscope -r captures/strs-loss.pcap -d udp.port==7777,strs_ksy
# The tests run both on the Starstrike corpus and compare their decoded
# fields and sequence findings (a cross-check of two independent paths).
meta:
  id: strs_ksy
  title: Starstrike (described)
  endian: be
seq:
  - id: protocol_id
    contents: STRS
    doc: protocolId, 0x53545253.
  - id: packet_type
    type: u2
    enum: packet_type
  - id: sequence_number
    type: u2
  - id: ack_bits
    type: u4
    doc: Bit N acknowledges the peer's packet (sequenceNumber - N - 1).
  - id: payload
    type:
      switch-on: packet_type
      cases:
        packet_type::connection_request: connection_request
        packet_type::connection_accept: connection_accept
        packet_type::connection_reject: reason_message
        packet_type::disconnect: reason_message
        packet_type::heartbeat: heartbeat
        packet_type::player_input: player_input
        packet_type::world_snapshot: world_snapshot
        packet_type::entity_spawn: entity_spawn
        packet_type::entity_destroy: entity_destroy
        packet_type::player_scored: player_scored
        packet_type::player_died: player_died
        packet_type::match_state: match_state
        packet_type::chat_message: chat_message
types:
  connection_request:
    seq:
      - id: protocol_version
        type: u1
      - id: player_name
        type: strz
        size: 32
        encoding: UTF-8
      - id: client_id
        type: u8
  connection_accept:
    seq:
      - id: assigned_player_id
        type: u4
      - id: server_tick
        type: u4
      - id: tick_rate
        type: u4
  reason_message:
    seq:
      - id: reason
        type: u1
        valid:
          min: 1
          max: 4
      - id: message
        type: strz
        size: 128
        encoding: UTF-8
  heartbeat:
    seq:
      - id: timestamp
        type: u4
  player_input:
    seq:
      - id: tick
        type: u4
      - id: move_x
        type: f4
        valid:
          min: -1
          max: 1
      - id: move_y
        type: f4
        valid:
          min: -1
          max: 1
      - id: look_x
        type: f4
      - id: look_y
        type: f4
      - id: button_state
        type: u4
  world_snapshot:
    seq:
      - id: tick
        type: u4
      - id: entity_count
        type: u1
      - id: entities
        type: entity_state
        repeat: expr
        repeat-expr: entity_count
  entity_state:
    seq:
      - id: entity_id
        type: u4
      - id: entity_type
        type: u1
        valid:
          min: 1
          max: 4
      - id: position
        type: vector3
      - id: rotation
        type: quaternion
      - id: velocity
        type: vector3
      - id: health
        type: u1
      - id: flags
        type: u1
  entity_spawn:
    seq:
      - id: entity_id
        type: u4
      - id: entity_type
        type: u1
        valid:
          min: 1
          max: 4
      - id: position
        type: vector3
      - id: rotation
        type: quaternion
      - id: owner_id
        type: u1
  entity_destroy:
    seq:
      - id: entity_id
        type: u4
      - id: reason
        type: u1
        valid:
          min: 1
          max: 4
  player_scored:
    seq:
      - id: player_id
        type: u4
      - id: points
        type: u4
      - id: score_type
        type: u1
        valid:
          min: 1
          max: 3
  player_died:
    seq:
      - id: victim_id
        type: u4
      - id: killer_id
        type: u4
      - id: death_type
        type: u1
        valid:
          min: 1
          max: 4
  match_state:
    seq:
      - id: state
        type: u1
        valid:
          min: 1
          max: 5
      - id: time_remaining
        type: u4
      - id: team_scores
        type: u1
        repeat: expr
        repeat-expr: 4
  chat_message:
    seq:
      - id: sender_id
        type: u4
      - id: channel
        type: u1
        valid:
          min: 1
          max: 4
      - id: message
        type: strz
        size: 256
        encoding: UTF-8
  vector3:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
  quaternion:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
      - id: w
        type: f4
enums:
  packet_type:
    0x0001: connection_request
    0x0002: connection_accept
    0x0003: connection_reject
    0x0004: disconnect
    0x0005: heartbeat
    0x0100: player_input
    0x0101: world_snapshot
    0x0102: entity_spawn
    0x0103: entity_destroy
    0x0200: player_scored
    0x0201: player_died
    0x0202: match_state
    0x0300: chat_message
-lwarscope:
  title: Starstrike (described)
  recognise:
    magic: STRS
    offset: 0
  server:
    port: 7777
    sends: [connection_accept, connection_reject, world_snapshot, entity_spawn, entity_destroy, player_scored, player_died, match_state]
    receives: [connection_request, player_input]
  message-type: packet_type
  sequence:
    field: sequence_number
    recency: serial
  ack:
    bitfield: ack_bits
    anchor: sequence_number
  timeout: 10s
  mtu: 1200
  rates:
    player_input: 60
    world_snapshot: 60
