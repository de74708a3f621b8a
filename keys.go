package redisson

import "strings"

// Key layout. Every key and channel of one object shares the object's hash tag, so every script
// touches one Cluster slot:
//
//	lock            <prefix><name>        string "<owner>|<count>|<req>" while held, absent when free
//	release record  {<prefix><name>}:rel  the last holder's value, renamed there by its final release
//	wake channel    {<prefix><name>}:ch
//
// When the name has its own {hash tag}, suffixes are appended to it instead ("<prefix><name>:ch").
// As in Redisson, the object's key is its name and auxiliary names are "{name}:suffix", so a name
// without braces and its auxiliary names hash to the same slot.

// objectKeys returns the main key of name and a function building its auxiliary keys, or an error if
// the name cannot be laid out in one slot.
func objectKeys(prefix, name string) (key string, aux func(suffix string) string, err error) {
	if name == "" {
		return "", nil, invalidf("empty name")
	}
	key = prefix + name
	if _, ok := hashTag(key); ok {
		return key, func(s string) string { return key + ":" + s }, nil
	}
	wrapped := "{" + key + "}"
	if tag, _ := hashTag(wrapped + ":x"); tag != key {
		// A '}' in the name would end our tag early and split the object across slots.
		return "", nil, invalidf("name %q contains '}' without a complete {hash tag}", name)
	}
	return key, func(s string) string { return wrapped + ":" + s }, nil
}

// hashTag returns the part of key that Redis Cluster hashes: the text between the first '{' and the
// next '}' when non-empty, else the whole key (ok is false then).
func hashTag(key string) (string, bool) {
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

// keySlot is the Redis Cluster slot of key (CRC16/XMODEM of its hash tag, mod 16384).
func keySlot(key string) int {
	tag, _ := hashTag(key)
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
	return int(crc) % 16384
}
