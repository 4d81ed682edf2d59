package proto

import "testing"

// TestFrameTypesDistinct guards against two extensions taking the same
// number, which would make a peer read one frame as the other.
func TestFrameTypesDistinct(t *testing.T) {
	types := map[string]Type{
		"OPEN": TypeOpen, "INPUT": TypeInput, "RESIZE": TypeResize, "CLOSE": TypeClose, "CREDIT": TypeCredit,
		"SIGNAL": TypeSignal, "FOREGROUND": TypeForeground, "HELLO": TypeHello, "PING": TypePing,
		"LIST": TypeList, "ATTACH": TypeAttach, "DETACH": TypeDetach, "STOP": TypeStop, "UPGRADE": TypeUpgrade, "HANDOFF": TypeHandoff, "REVIVE": TypeRevive,
		"OPENED": TypeOpened, "OUTPUT": TypeOutput, "EXIT": TypeExit, "ERROR": TypeError,
		"FOREGROUND reply": TypeForegroundInfo, "HELLO reply": TypeHelloReply, "PONG": TypePong,
		"LISTED": TypeListed, "ATTACHED": TypeAttached, "SNAPSHOT": TypeSnapshot, "DETACHED": TypeDetached, "UPGRADING": TypeUpgrading,
		"HANDED_OFF": TypeHandedOff, "HOST_ENDED": TypeHostEnded,
	}
	seen := map[Type]string{}
	for name, typ := range types {
		if other, ok := seen[typ]; ok {
			t.Errorf("%s and %s are both 0x%02x", name, other, uint8(typ))
		}
		seen[typ] = name
	}
}
