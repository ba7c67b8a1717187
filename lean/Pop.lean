import Pop.Rules
import Pop.Check
import Pop.Sound
import Pop.Corpus
import Pop.NonWin
import Pop.NonWinSound
