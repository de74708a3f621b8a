// Package slot computes Redis Cluster hash slots, for the Client's grouping of renewals and the
// sharded pub/sub hub's routing of refused subscriptions.
package slot

import "strings"

// Count is the number of hash slots of a Redis Cluster.
const Count = 16384

// Tag returns the part of key that Redis Cluster hashes: the text between the first '{' and the
// next '}' when non-empty, else the whole key (ok is false then).
func Tag(key string) (tag string, ok bool) {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return key, false
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return key, false
	}
	return key[i+1 : i+1+j], true
}

// Of is the Redis Cluster slot of key (CRC16/XMODEM of its hash tag, mod 16384).
func Of(key string) int {
	tag, _ := Tag(key)
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % Count
}
