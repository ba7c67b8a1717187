import Pop.Rules
import Pop.Check
import Pop.Sound
import Pop.Corpus
